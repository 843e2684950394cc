package authz

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/pmapi/pmapi/internal/tick"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// Principal is who a resource request acts as.
type Principal struct {
	Workspace tenant.Workspace
	Shard     *tenant.Shard
	ClientID  string
	// Credential is "api_key" or "oauth".
	Credential string
	KeyID      uuid.UUID
	// Scopes are the credential's own scopes ANDed with its app's current ones.
	Scopes Scopes
	// RateLimitPerMinute is the app's override, or 0 for the server default.
	RateLimitPerMinute int
	// Subject is the user an OAuth token acts for (uuid.Nil for API keys).
	Subject uuid.UUID
}

// BearerVerifier checks `Authorization: Bearer <token>` values (OAuth access
// tokens). Authenticator refuses bearer tokens when none is configured.
type BearerVerifier interface {
	VerifyBearer(ctx context.Context, clientID, token string) (Principal, error)
}

// Authenticator turns X-Client-ID plus Authorization into a Principal. API keys
// are cached by their hash after the first lookup, so the hot path touches no
// database; Listen keeps the cache honest across instances.
type Authenticator struct {
	dir    *tenant.Directory
	Bearer BearerVerifier
	// TTL bounds how long a cache entry is trusted even without a notification.
	TTL time.Duration
	now func() time.Time

	mu    sync.RWMutex
	cache map[[32]byte]*cachedKey

	lastUsed *lastUsedBatcher
}

// cachedKey is everything a request needs to know about a key, its app and its
// workspace, as of loadedAt.
type cachedKey struct {
	keyID      uuid.UUID
	clientID   string
	workspace  tenant.Workspace
	shard      *tenant.Shard
	keyScopes  Scopes
	appScopes  Scopes
	appStatus  string
	appFound   bool
	rateLimit  int
	expiresAt  *time.Time
	revoked    bool
	validUntil *time.Time // set for the old value of a regenerated key
	loadedAt   time.Time
}

// NewAuthenticator builds an authenticator over the directory's shards.
func NewAuthenticator(dir *tenant.Directory) *Authenticator {
	return &Authenticator{
		dir:      dir,
		TTL:      time.Minute,
		now:      time.Now,
		cache:    map[[32]byte]*cachedKey{},
		lastUsed: newLastUsedBatcher(),
	}
}

var (
	errMissingCredentials = pmapi.Errorf(pmapi.CodeUnauthenticated, "X-Client-ID and Authorization headers are required")
	errInvalidKey         = pmapi.Errorf(pmapi.CodeInvalidToken, "the API key is not valid for this client")
)

// Authenticate checks one request's credentials.
func (a *Authenticator) Authenticate(ctx context.Context, clientID, authorization string) (Principal, error) {
	p, err := a.authenticate(ctx, clientID, authorization)
	countAttempt(err)
	return p, err
}

func (a *Authenticator) authenticate(ctx context.Context, clientID, authorization string) (Principal, error) {
	if clientID == "" || authorization == "" {
		return Principal{}, errMissingCredentials
	}
	if token, ok := strings.CutPrefix(authorization, "Bearer "); ok {
		if a.Bearer == nil {
			return Principal{}, pmapi.Errorf(pmapi.CodeInvalidToken, "bearer tokens are not accepted by this server")
		}
		return a.Bearer.VerifyBearer(ctx, clientID, token)
	}
	// Reject look-alikes before any lookup: the checksum is offline.
	if !CheckAPIKey(authorization) {
		return Principal{}, errInvalidKey
	}
	hash := sha256Array(authorization)
	entry, err := a.lookup(ctx, clientID, hash)
	if err != nil {
		return Principal{}, err
	}
	return a.admit(entry, clientID)
}

func (a *Authenticator) lookup(ctx context.Context, clientID string, hash [32]byte) (*cachedKey, error) {
	a.mu.RLock()
	entry := a.cache[hash]
	a.mu.RUnlock()
	if entry != nil && a.now().Sub(entry.loadedAt) < a.TTL {
		cacheHit.Inc()
		return entry, nil
	}
	cacheMiss.Inc()
	res, err := a.dir.Resolve(ctx, clientID)
	if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
		return nil, errInvalidKey
	}
	if err != nil {
		return nil, err
	}
	entry, err = loadKey(ctx, res, hash[:])
	if err != nil {
		return nil, err
	}
	entry.loadedAt = a.now()
	a.mu.Lock()
	a.cache[hash] = entry
	a.mu.Unlock()
	return entry, nil
}

// loadKey reads the key (by current or grace-period value) and its app in one
// round trip.
func loadKey(ctx context.Context, res tenant.Resolution, hash []byte) (*cachedKey, error) {
	e := &cachedKey{workspace: res.Workspace, shard: res.Shard}
	found := false
	err := res.Shard.Read(ctx, res.Workspace.ID, func(b *pgx.Batch) {
		b.Queue(`select k.id, k.client_id, k.scopes, k.expires_at, k.revoked_at is not null,
				case when k.hash = $2 then null else k.previous_expires_at end,
				a.client_id is not null, coalesce(a.scopes, '{}'), coalesce(a.status, 'DISABLED'),
				coalesce(a.rate_limit_per_minute, 0)
			from api_keys k left join apps a on a.workspace_id = k.workspace_id and a.client_id = k.client_id
			where k.workspace_id = $1 and (k.hash = $2 or (k.previous_hash = $2 and k.previous_expires_at is not null))`,
			res.Workspace.ID, hash).QueryRow(func(row pgx.Row) error {
			var keyScopes, appScopes []string
			err := row.Scan(&e.keyID, &e.clientID, &keyScopes, &e.expiresAt, &e.revoked, &e.validUntil,
				&e.appFound, &appScopes, &e.appStatus, &e.rateLimit)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			found = true
			e.keyScopes, e.appScopes = scopesFromDB(keyScopes), scopesFromDB(appScopes)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errInvalidKey
	}
	return e, nil
}

// admit applies the rules to a (possibly cached) entry. Time-based rules are
// checked on every request, so a cached key still expires on time.
func (a *Authenticator) admit(e *cachedKey, clientID string) (Principal, error) {
	now := a.now()
	switch {
	case e.clientID != clientID || e.revoked || !e.appFound:
		return Principal{}, errInvalidKey
	case e.validUntil != nil && !now.Before(*e.validUntil):
		return Principal{}, errInvalidKey
	case e.workspace.Status == tenant.StatusSuspended:
		return Principal{}, pmapi.Errorf(pmapi.CodeWorkspaceSuspended, "this workspace is suspended")
	case e.appStatus != AppActive:
		return Principal{}, pmapi.Errorf(pmapi.CodeAppDisabled, "the app is disabled")
	case e.expiresAt != nil && !now.Before(*e.expiresAt):
		return Principal{}, pmapi.Errorf(
			pmapi.CodeTokenExpired,
			"the API key expired at %s",
			e.expiresAt.UTC().Format(time.RFC3339),
		)
	}
	a.lastUsed.record(e.shard, e.workspace.ID, e.keyID, now)
	return Principal{
		Workspace: e.workspace, Shard: e.shard, ClientID: e.clientID, Credential: "api_key",
		KeyID: e.keyID, Scopes: e.keyScopes & e.appScopes, RateLimitPerMinute: e.rateLimit,
	}, nil
}

// grantCache is implemented by bearer verifiers that cache per grant.
type grantCache interface {
	InvalidateGrants(tenant.Invalidation)
	ResetGrants()
}

// Invalidate drops cached entries an invalidation concerns.
func (a *Authenticator) Invalidate(inv tenant.Invalidation) {
	if g, ok := a.Bearer.(grantCache); ok {
		g.InvalidateGrants(inv)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, e := range a.cache {
		switch {
		case inv.Kind == "key" && e.keyID.String() == inv.ID,
			inv.Kind == "client" && e.clientID == inv.ID,
			inv.Kind == "workspace" && e.workspace.ID.String() == inv.ID:
			delete(a.cache, h)
		}
	}
}

// Reset drops the whole cache.
func (a *Authenticator) Reset() {
	if g, ok := a.Bearer.(grantCache); ok {
		g.ResetGrants()
	}
	a.mu.Lock()
	a.cache = map[[32]byte]*cachedKey{}
	a.mu.Unlock()
}

// Run keeps the cache in step with every shard's invalidations and flushes
// lastUsedAt in batches, until ctx ends. ready is called once listening.
func (a *Authenticator) Run(ctx context.Context, ready func()) {
	go a.lastUsed.run(ctx)
	go a.sweep(ctx)
	tenant.Listen(ctx, a.dir.Shards(), a.Invalidate, a.Reset, ready)
	a.lastUsed.flush(context.WithoutCancel(ctx))
}

// FlushLastUsed writes pending lastUsedAt values now.
func (a *Authenticator) FlushLastUsed(ctx context.Context) error { return a.lastUsed.flush(ctx) }

// sweep drops entries past their TTL, so keys no longer used do not stay in
// memory.
func (a *Authenticator) sweep(ctx context.Context) {
	tick.Every(ctx, a.TTL, func() {
		now := a.now()
		a.mu.Lock()
		for h, e := range a.cache {
			if now.Sub(e.loadedAt) >= a.TTL {
				delete(a.cache, h)
			}
		}
		a.mu.Unlock()
	})
}
