package auth

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"time"
)

// Defaults of [Cached].
const (
	// DefaultCacheTTL is how long an accepted token is taken on the
	// verifier's earlier word. It is also how long a token signed by a key
	// the issuer has since withdrawn may go on working, so it is short.
	DefaultCacheTTL = time.Minute
	// DefaultCacheSize bounds how many accepted tokens are remembered.
	DefaultCacheSize = 10000
)

// Cached returns a [Verifier] that remembers the tokens v accepted, so that
// a client calling many times with one token has it checked once a
// minute rather than on every call: the signature check, the JSON pass
// over the claims and the identity's checks are most of what
// authentication costs a call.
//
// An accepted token is remembered until ttl (0: [DefaultCacheTTL]) has
// passed or it expires, whichever is first, and its identity is handed out
// as a fresh copy each time. Refusals and verifier failures are never
// remembered: a bad token is checked, and refused, every time, and cannot
// push good ones out. At most size (0: [DefaultCacheSize]) tokens are
// remembered; past that, expired entries go first, then arbitrary ones. The
// key is the token's SHA-256, so the cache holds no token.
func Cached(v Verifier, ttl time.Duration, size int) Verifier {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if size <= 0 {
		size = DefaultCacheSize
	}
	c := &verifierCache{v: v, ttl: ttl, size: size, now: time.Now, m: map[[sha256.Size]byte]cachedToken{}}
	return c.verify
}

type verifierCache struct {
	v    Verifier
	ttl  time.Duration
	size int
	now  func() time.Time

	mu sync.Mutex
	m  map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	id    Identity
	exp   time.Time
	until time.Time
}

func (c *verifierCache) verify(ctx context.Context, token string) (*Identity, time.Time, error) {
	key := sha256.Sum256([]byte(token))
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[key]
	if ok && !now.Before(e.until) {
		delete(c.m, key)
		ok = false
	}
	c.mu.Unlock()
	if ok {
		return e.identity(), e.exp, nil
	}
	id, exp, err := c.v(ctx, token)
	if err != nil {
		return id, exp, err
	}
	until := now.Add(c.ttl)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	if now.Before(until) {
		c.put(key, cachedToken{id: *id, exp: exp, until: until}, now)
	}
	return id, exp, nil
}

func (c *verifierCache) put(key [sha256.Size]byte, e cachedToken, now time.Time) {
	e.id.Groups = slices.Clone(e.id.Groups)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.size {
		for k, old := range c.m {
			if !now.Before(old.until) {
				delete(c.m, k)
			}
		}
	}
	for k := range c.m {
		if len(c.m) < c.size {
			break
		}
		delete(c.m, k)
	}
	c.m[key] = e
}

// identity returns a copy of the remembered identity the caller may keep
// and change.
func (e cachedToken) identity() *Identity {
	id := e.id
	id.Groups = slices.Clone(id.Groups)
	return &id
}
