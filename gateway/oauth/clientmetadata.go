package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document,
// preferred to dynamic registration by the MCP authorization spec): a client
// whose client_id is an https URL publishes its metadata there, and the
// server fetches it instead of keeping a registration. The document's
// client_id must be that URL, and its redirect URIs are held to the same
// rules as a registered client's. Dynamic registration stays for clients
// that use it.
const (
	// maxMetadataDocumentBytes bounds a fetched document; real ones are a
	// few hundred bytes.
	maxMetadataDocumentBytes = 16 << 10
	// metadataFetchTimeout bounds one fetch, connection and body included.
	metadataFetchTimeout = 5 * time.Second
	// metadataCacheTTL is how long a fetched document is used before it is
	// fetched again.
	metadataCacheTTL = 10 * time.Minute
	// maxMetadataRedirects bounds the redirects one fetch follows, all on
	// the client_id's host.
	maxMetadataRedirects = 3
)

// isMetadataClientID reports whether id names a client metadata document:
// an https URL with a path (draft §3). Registered clients' ids ("c_…")
// never are.
func isMetadataClientID(id string) bool {
	return strings.HasPrefix(id, "https://")
}

// checkMetadataClientID checks a client_id URL (draft §3): https, a host, a
// path other than "/" without dot segments, no fragment and no user.
func checkMetadataClientID(id string) (*url.URL, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("client_id %q is not an https URL", id)
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(id, "#") {
		return nil, fmt.Errorf("client_id %q has a user or a fragment, which a client ID metadata document URL may not", id)
	}
	if u.Path == "" || u.Path == "/" {
		return nil, fmt.Errorf("client_id %q has no path: a client ID metadata document URL names a document, like https://app.example/oauth/client.json", id)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, fmt.Errorf("client_id %q has a dot segment in its path", id)
		}
	}
	return u, nil
}

// clientMetadata is the part of a client ID metadata document the server
// reads (the RFC 7591 members, and client_id).
type clientMetadata struct {
	ClientID string `json:"client_id"`
	registration
}

// metadataClients fetches client ID metadata documents and keeps them for
// metadataCacheTTL.
type metadataClients struct {
	http *http.Client
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cachedClient
}

type cachedClient struct {
	c       *client
	expires time.Time
}

// newMetadataClients returns the fetcher. Only public addresses are
// dialled, and loopback ones too when loopback is set (baton dev, so that a
// client serving its document on this machine works); redirects stay on
// the client_id's host.
func newMetadataClients(o *Options, now func() time.Time) *metadataClients {
	dialer := &net.Dialer{Timeout: metadataFetchTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("address %q is not an IP address", address)
		}
		if ip.IsLoopback() && o.LoopbackClientMetadata {
			return nil
		}
		if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() {
			return fmt.Errorf("%s is not a public address; client ID metadata documents are fetched from public hosts only", ip)
		}
		return nil
	}}
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   metadataFetchTimeout,
		ResponseHeaderTimeout: metadataFetchTimeout,
		MaxIdleConns:          10,
		IdleConnTimeout:       time.Minute,
	}
	if o.ClientMetadataRoots != nil {
		tr.TLSClientConfig = tlsConfigWithRoots(o.ClientMetadataRoots)
	}
	hc := &http.Client{
		Transport: tr,
		Timeout:   metadataFetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxMetadataRedirects {
				return fmt.Errorf("more than %d redirects", maxMetadataRedirects)
			}
			if req.URL.Scheme != "https" || !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				return fmt.Errorf("a redirect to %s leaves the client_id's host %s", req.URL.Redacted(), via[0].URL.Host)
			}
			return nil
		},
	}
	return &metadataClients{http: hc, now: now, cache: map[string]cachedClient{}}
}

// client returns the client id's document describes, fetched or from the
// cache; newClient checks the metadata as registration does.
func (m *metadataClients) client(ctx context.Context, id string, newClient func(*registration) (*client, *Error)) (*client, *Error) {
	now := m.now()
	m.mu.Lock()
	cached, ok := m.cache[id]
	m.mu.Unlock()
	if ok && now.Before(cached.expires) {
		return cached.c, nil
	}
	c, e := m.fetch(ctx, id, newClient)
	if e != nil {
		return nil, e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cache) >= maxClients {
		for k, v := range m.cache {
			if !now.Before(v.expires) || len(m.cache) >= maxClients {
				delete(m.cache, k)
			}
		}
	}
	m.cache[id] = cachedClient{c: c, expires: now.Add(metadataCacheTTL)}
	return c, nil
}

func (m *metadataClients) fetch(ctx context.Context, id string, newClient func(*registration) (*client, *Error)) (*client, *Error) {
	refuse := func(format string, a ...any) (*client, *Error) {
		return nil, unauthorized("client ID metadata document " + id + ": " + fmt.Sprintf(format, a...))
	}
	u, err := checkMetadataClientID(id)
	if err != nil {
		return nil, unauthorized(err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, metadataFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return refuse("%v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := m.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return refuse("could not be fetched: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refuse("answered %s, want 200", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return refuse("has Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataDocumentBytes+1))
	if err != nil {
		return refuse("could not be read: %v", err)
	}
	if len(body) > maxMetadataDocumentBytes {
		return refuse("is over %d bytes", maxMetadataDocumentBytes)
	}
	var doc clientMetadata
	if err := json.Unmarshal(body, &doc); err != nil {
		return refuse("is not a JSON object of client metadata: %v", err)
	}
	if doc.ClientID != id {
		return refuse("names client_id %q, not its own URL", doc.ClientID)
	}
	if doc.TokenEndpointAuthMethod == "" {
		doc.TokenEndpointAuthMethod = authNone
	}
	if doc.TokenEndpointAuthMethod != authNone {
		return refuse("asks for token_endpoint_auth_method %q; a client known by its document has no secret here, so use none", doc.TokenEndpointAuthMethod)
	}
	c, e := newClient(&doc.registration)
	if e != nil {
		return refuse("%s", e.Description)
	}
	c.ID = id
	return c, nil
}

// lookupClient returns the client id names: a registered one, or one
// described by its client ID metadata document.
func (s *Server) lookupClient(ctx context.Context, id string) (*client, *Error) {
	if c := s.state.client(id); c != nil {
		return c, nil
	}
	if isMetadataClientID(id) {
		return s.metadata.client(ctx, id, s.newClient)
	}
	return nil, nil
}

func tlsConfigWithRoots(roots *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}
