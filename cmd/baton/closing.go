package main

import (
	"net/http"
	"time"
)

// refusedBodyWait is how long a server reads what is left of a request's
// body after an answer that closes the connection: enough for a body
// already on its way, so the caller reads the answer rather than a reset
// connection, and no more.
const refusedBodyWait = time.Second

// closeWhenAnswered bounds what the server reads of a request once its
// answer says Connection: close. After a handler returns, net/http reads
// what is left of a body under 256 KiB, hoping to reuse the connection,
// for as long as the connection's read deadline allows: the server's
// ReadTimeout, a minute, unless the handler shortened it through the
// writer it was given. A caller that announced a body and stalled (a
// slow-loris) and was refused would hold its connection that long. As the
// outermost handler, this one sees the server's own writer, so the bound
// holds whichever handler inside refused, and whatever it wrapped the
// writer in.
func closeWhenAnswered(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Body != nil && r.Body != http.NoBody && w.Header().Get("Connection") == "close" {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyWait))
		}
	})
}
