package oauth

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// RequireHost serves h only to requests whose Host header names base's
// host: when base is on loopback, any loopback name (localhost, 127.0.0.1,
// [::1]), else base's host and port exactly. Anything else gets 421
// Misdirected Request before h sees it, so nothing changes.
//
// It defends against DNS rebinding: a page of another site whose name
// its owner points at 127.0.0.1 becomes same-origin with a loopback
// server, but its requests still carry that other name in Host. The MCP
// SDK guards /mcp the same way; the dev sign-in, which has no password,
// needs it most.
func RequireHost(base *url.URL, h http.Handler) http.Handler {
	want := hostPort(base.Host, base.Scheme)
	loopback := isLoopback(base.Hostname())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := hostPort(r.Host, base.Scheme)
		name, _, _ := net.SplitHostPort(got)
		if got != want && !(loopback && isLoopback(name)) {
			w.Header().Set("Connection", "close")
			http.Error(w, "This server answers as "+base.Host+", not as "+r.Host+"; open it at "+base.Scheme+"://"+base.Host+".", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostPort is a Host header (or URL host) lowercased, with the scheme's
// default port when it names none.
func hostPort(host, scheme string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
