package oauth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// Bounds on what the server holds, so that a misbehaving client cannot grow
// it without end. Past maxClients, maxRefresh, maxSpent or maxCodes spent
// codes, the oldest entry makes room: the least recently used client, the
// token that expires first.
const (
	maxClients = 1000
	maxPending = 1000
	maxCodes   = 1000
	maxRefresh = 10000
	maxSpent   = 10000
	// clientTTL is how long a registered client lasts without being used
	// (an authorization or a token issued to it); its refresh tokens go
	// with it.
	clientTTL = 30 * 24 * time.Hour
	// touchEvery is how stale a client's last use may be before a new use
	// is written down: one use a day rewrites the state file, not every.
	touchEvery = 24 * time.Hour
	// pruneEvery is how often expired entries are looked for; the bounds
	// hold at every change.
	pruneEvery = time.Minute
)

// client is a registered client (RFC 7591).
type client struct {
	ID              string   `json:"client_id"`
	SecretHash      string   `json:"client_secret_sha256,omitempty"`
	AuthMethod      string   `json:"token_endpoint_auth_method"`
	RedirectURIs    []string `json:"redirect_uris"`
	Name            string   `json:"client_name,omitempty"`
	URI             string   `json:"client_uri,omitempty"`
	Scope           string   `json:"scope,omitempty"`
	SoftwareID      string   `json:"software_id,omitempty"`
	SoftwareVersion string   `json:"software_version,omitempty"`
	IssuedAt        int64    `json:"client_id_issued_at"`
	// LastUsed is when the client was last used, to a day (touchEvery);
	// 0 until its first use.
	LastUsed int64 `json:"last_used,omitempty"`
}

// lastUsed is when c was registered or last used, whichever is later.
func (c *client) lastUsed() int64 { return max(c.IssuedAt, c.LastUsed) }

// identity is an auth.Identity as the state file stores it.
type identity struct {
	ID     string   `json:"id"`
	Kind   string   `json:"kind"`
	Groups []string `json:"groups,omitempty"`
	Org    string   `json:"org,omitempty"`
}

func fromIdentity(id auth.Identity) identity {
	return identity{ID: id.ID, Kind: id.Kind.String(), Groups: id.Groups, Org: id.Org}
}

func (i identity) identity() auth.Identity {
	return auth.Identity{ID: i.ID, Kind: auth.Kind(i.Kind), Groups: i.Groups, Org: i.Org}
}

// grant is what a live refresh token stands for. Every refresh token
// descends from one authorization code; they share a family, which is
// revoked whole when a spent code or refresh token is presented again.
type grant struct {
	Family   string    `json:"family"`
	ClientID string    `json:"client_id"`
	Identity identity  `json:"identity"`
	Resource string    `json:"resource"`
	Scope    string    `json:"scope,omitempty"`
	Expires  time.Time `json:"expires"`
}

// spent is a rotated-out refresh token or a redeemed code, kept until it
// would have expired so that a replay revokes its family.
type spent struct {
	Family  string    `json:"family"`
	Expires time.Time `json:"expires"`
}

// code is an issued authorization code.
type code struct {
	family      string
	clientID    string
	redirectURI string
	redirectSet bool // the authorization request named redirect_uri
	challenge   string
	scope       string
	identity    auth.Identity
	expires     time.Time
}

// pending is an authorization request waiting for its sign-in.
type pending struct {
	req     *authRequest
	expires time.Time
}

// state holds clients, requests, codes and refresh tokens. Secrets are kept
// only as SHA-256 digests ([digest]). Clients, refresh tokens and spent
// refresh tokens are saved to file, when there is one, after each change
// that alters them; what has expired is dropped first (prune).
type state struct {
	file string
	log  *slog.Logger
	// written is the state file's content as last read or written: a
	// save that would write the same bytes does not.
	written []byte
	// pruned is when prune last looked for what has expired.
	pruned time.Time

	mu       sync.Mutex
	saved    savedState
	pending  map[string]*pending
	codes    map[string]*code
	redeemed map[string]spent
}

// savedState is the state file's content.
type savedState struct {
	Clients map[string]*client `json:"clients"`
	Refresh map[string]*grant  `json:"refresh_tokens"`
	Spent   map[string]spent   `json:"spent_refresh_tokens"`
}

func loadState(file string, log *slog.Logger) (*state, error) {
	st := &state{
		file:     file,
		log:      log,
		pending:  map[string]*pending{},
		codes:    map[string]*code{},
		redeemed: map[string]spent{},
	}
	if file != "" {
		b, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("oauth: read state file: %w", err)
		default:
			if err := json.Unmarshal(b, &st.saved); err != nil {
				return nil, fmt.Errorf("oauth: state file %s is not valid: %v; delete it (clients then register again)", file, err)
			}
		}
	}
	if st.saved.Clients == nil {
		st.saved.Clients = map[string]*client{}
	}
	if st.saved.Refresh == nil {
		st.saved.Refresh = map[string]*grant{}
	}
	if st.saved.Spent == nil {
		st.saved.Spent = map[string]spent{}
	}
	st.written, _ = json.MarshalIndent(&st.saved, "", "  ")
	return st, nil
}

// save writes the state file, when there is one and its content changed,
// after dropping what has expired (prune). Called with mu held. A failure
// is logged: the server goes on from memory.
func (st *state) save(now time.Time) {
	st.prune(now)
	if st.file == "" {
		return
	}
	b, err := json.MarshalIndent(&st.saved, "", "  ")
	if err == nil && bytes.Equal(b, st.written) {
		return
	}
	if err == nil {
		err = writeFileAtomic(st.file, b)
	}
	if err != nil {
		st.log.Error("oauth: save state file; registrations and refresh tokens will not survive a restart", "file", st.file, "err", err)
		return
	}
	st.written = b
}

// prune drops clients unused for clientTTL with their refresh tokens,
// expired refresh tokens, spent tokens and codes, and the oldest entries
// past each bound. Called with mu held.
func (st *state) prune(now time.Time) {
	if now.Sub(st.pruned) < pruneEvery && len(st.saved.Clients) <= maxClients && len(st.saved.Refresh) <= maxRefresh &&
		len(st.saved.Spent) <= maxSpent && len(st.redeemed) <= maxCodes {
		return
	}
	st.pruned = now
	for id, c := range st.saved.Clients {
		if now.Sub(time.Unix(c.lastUsed(), 0)) >= clientTTL {
			st.dropClient(id)
		}
	}
	for h, g := range st.saved.Refresh {
		if !now.Before(g.Expires) {
			delete(st.saved.Refresh, h)
		}
	}
	pruneSpent(st.saved.Spent, now, maxSpent)
	pruneSpent(st.redeemed, now, maxCodes)
	for len(st.saved.Refresh) > maxRefresh {
		delete(st.saved.Refresh, first(st.saved.Refresh, func(a, b *grant) bool { return a.Expires.Before(b.Expires) }))
	}
}

// pruneSpent drops the expired entries of m, then the ones that expire
// first until at most limit are left.
func pruneSpent(m map[string]spent, now time.Time, limit int) {
	for h, sp := range m {
		if !now.Before(sp.Expires) {
			delete(m, h)
		}
	}
	if len(m) <= limit {
		return
	}
	keys := make([]string, 0, len(m))
	for h := range m {
		keys = append(keys, h)
	}
	slices.SortFunc(keys, func(a, b string) int { return m[a].Expires.Compare(m[b].Expires) })
	for _, h := range keys[:len(m)-limit] {
		delete(m, h)
	}
}

// first returns the key of m whose value comes first by less.
func first[V any](m map[string]V, less func(a, b V) bool) string {
	var key string
	var best V
	for k, v := range m {
		if key == "" || less(v, best) {
			key, best = k, v
		}
	}
	return key
}

// dropClient forgets client id and its refresh tokens. Called with mu held.
func (st *state) dropClient(id string) {
	delete(st.saved.Clients, id)
	for h, g := range st.saved.Refresh {
		if g.ClientID == id {
			delete(st.saved.Refresh, h)
		}
	}
}

// touch records that client id was used at now, when its last recorded
// use is touchEvery old. Called with mu held; the caller saves.
func (st *state) touch(id string, now time.Time) {
	if c := st.saved.Clients[id]; c != nil && now.Unix()-c.lastUsed() >= int64(touchEvery/time.Second) {
		c.LastUsed = now.Unix()
	}
}

func writeFileAtomic(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".oauth-state-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// addClient registers c. Past maxClients the least recently used client
// is forgotten to make room.
func (st *state) addClient(c *client, now time.Time) *Error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.prune(now)
	for len(st.saved.Clients) >= maxClients {
		st.dropClient(first(st.saved.Clients, func(a, b *client) bool {
			return a.lastUsed() < b.lastUsed() || a.lastUsed() == b.lastUsed() && a.IssuedAt < b.IssuedAt
		}))
	}
	st.saved.Clients[c.ID] = c
	st.save(now)
	return nil
}

// client returns the registered client id, or nil.
func (st *state) client(id string) *client {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.saved.Clients[id]
}

// addPending keeps an authorization request until its sign-in and returns
// the key the sign-in form carries.
func (st *state) addPending(req *authRequest, now time.Time, ttl time.Duration) (string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, p := range st.pending {
		if !now.Before(p.expires) {
			delete(st.pending, k)
		}
	}
	if len(st.pending) >= maxPending {
		return "", fmt.Errorf("%d sign-ins are already waiting; finish or abandon them, then try again", maxPending)
	}
	key := rand.Text()
	st.pending[key] = &pending{req: req, expires: now.Add(ttl)}
	return key, nil
}

// pendingRequest returns the authorization request waiting under key, or
// nil when there is none or it has expired.
func (st *state) pendingRequest(key string, now time.Time) *authRequest {
	st.mu.Lock()
	defer st.mu.Unlock()
	p := st.pending[key]
	if p == nil || !now.Before(p.expires) {
		return nil
	}
	return p.req
}

// dropPending forgets the request under key, and reports whether it was
// there: of two sign-ins posted for one request, only one goes on.
func (st *state) dropPending(key string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.pending[key]
	delete(st.pending, key)
	return ok
}

// addCode keeps an issued code under the digest of its value.
func (st *state) addCode(hash string, c *code, now time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for h, c := range st.codes {
		if !now.Before(c.expires) {
			delete(st.codes, h)
		}
	}
	pruneSpent(st.redeemed, now, maxCodes)
	if len(st.codes) >= maxCodes {
		return fmt.Errorf("%d authorization codes are already waiting to be exchanged; try again in a few minutes", maxCodes)
	}
	st.codes[hash] = c
	st.touch(c.clientID, now)
	st.save(now)
	return nil
}

// redeemCode spends the code whose digest is hash, whatever comes of the
// exchange: a code is good for one attempt. A code presented again revokes
// the refresh tokens issued for it.
func (st *state) redeemCode(hash string, now time.Time) (*code, *Error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.codes[hash]
	if c == nil {
		if sp, ok := st.redeemed[hash]; ok {
			st.revokeFamily(sp.Family, now)
			return nil, oauthError("invalid_grant", "authorization code was already used; the tokens issued for it are revoked: sign in again")
		}
		return nil, oauthError("invalid_grant", "authorization code is not known here: start the authorization again")
	}
	delete(st.codes, hash)
	st.redeemed[hash] = spent{Family: c.family, Expires: c.expires}
	pruneSpent(st.redeemed, now, maxCodes)
	if !now.Before(c.expires) {
		return nil, oauthError("invalid_grant", "authorization code expired: start the authorization again")
	}
	return c, nil
}

// addGrant keeps a new refresh token under the digest of its value.
func (st *state) addGrant(hash string, g *grant, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.saved.Refresh[hash] = g
	st.touch(g.ClientID, now)
	st.save(now)
}

// rotateRefresh spends the refresh token whose digest is oldHash, presented
// by clientID, and keeps its successor under newHash, valid for ttl. It
// returns the successor. A token presented again after it was rotated out
// revokes its whole family; one made for another resource than resource
// (the gateway moved) is refused. A scope asked for must be within the
// grant's (RFC 6749 §6); the successor keeps the grant's scope.
func (st *state) rotateRefresh(oldHash, newHash, clientID, resource, scope string, now time.Time, ttl time.Duration) (*grant, *Error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	g := st.saved.Refresh[oldHash]
	if g == nil {
		if sp, ok := st.saved.Spent[oldHash]; ok {
			st.revokeFamily(sp.Family, now)
			return nil, oauthError("invalid_grant", "refresh token was already used; every token of this sign-in is revoked: sign in again")
		}
		return nil, oauthError("invalid_grant", "refresh token is not known here: sign in again")
	}
	if !now.Before(g.Expires) {
		delete(st.saved.Refresh, oldHash)
		st.save(now)
		return nil, oauthError("invalid_grant", "refresh token expired: sign in again")
	}
	if g.ClientID != clientID {
		return nil, oauthError("invalid_grant", "refresh token was issued to another client")
	}
	if g.Resource != resource {
		delete(st.saved.Refresh, oldHash)
		st.save(now)
		return nil, oauthError("invalid_grant", "refresh token was made for "+g.Resource+", and this server now issues tokens for "+resource+": sign in again")
	}
	granted := strings.Fields(g.Scope)
	for _, sc := range strings.Fields(scope) {
		if !slices.Contains(granted, sc) {
			return nil, oauthError("invalid_scope", "scope "+sc+" was not granted at sign-in: sign in again to get it")
		}
	}
	delete(st.saved.Refresh, oldHash)
	st.saved.Spent[oldHash] = spent{Family: g.Family, Expires: g.Expires}
	next := *g
	next.Expires = now.Add(ttl)
	st.saved.Refresh[newHash] = &next
	st.touch(clientID, now)
	st.save(now)
	return &next, nil
}

// revokeFamily drops every refresh token of family. Called with mu held.
func (st *state) revokeFamily(family string, now time.Time) {
	for h, g := range st.saved.Refresh {
		if g.Family == family {
			delete(st.saved.Refresh, h)
			st.saved.Spent[h] = spent{Family: family, Expires: g.Expires}
		}
	}
	st.save(now)
}

// secret returns a new random secret: 32 bytes, base64url.
func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// digest is how secrets are kept: hex SHA-256.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
