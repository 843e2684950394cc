package authz

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// userCodeAlphabet is RFC 8628 section 6.1's base-20 alphabet: no vowels (no
// words), no look-alike characters.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// OAuth runs the device authorization grant and issues JWT access tokens and
// rotating refresh tokens.
type OAuth struct {
	Dir        *tenant.Directory
	Ring       *KeyRing
	Issuer     string
	Audience   string
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	DeviceTTL  time.Duration
	Interval   time.Duration
	// ReuseGrace lets a client that lost a refresh response use the spent token
	// again for a short while without revoking its family.
	ReuseGrace time.Duration

	mu     sync.Mutex
	grants map[uuid.UUID]*grantState
}

// NewOAuth sets the defaults: 15-minute access tokens, 30-day refresh tokens,
// 900-second device codes polled every 5 seconds, 30 seconds of reuse grace.
func NewOAuth(dir *tenant.Directory, ring *KeyRing, issuer string) *OAuth {
	return &OAuth{Dir: dir, Ring: ring, Issuer: issuer, Audience: "pmapi", AccessTTL: 15 * time.Minute,
		RefreshTTL: 30 * 24 * time.Hour, DeviceTTL: 15 * time.Minute, Interval: 5 * time.Second, ReuseGrace: 30 * time.Second,
		grants: map[uuid.UUID]*grantState{}}
}

// TokenError is an RFC 6749 section 5.2 error.
type TokenError struct {
	Code        string
	Description string
}

func (e *TokenError) Error() string { return e.Code + ": " + e.Description }

func tokenErr(code, desc string) *TokenError { return &TokenError{Code: code, Description: desc} }

// NormalizeUserCode upper-cases a user code and drops dashes and spaces.
func NormalizeUserCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func newUserCode() string {
	raw := pmapi.RandomBase62(64)
	var b strings.Builder
	for i := 0; b.Len() < 8 && i < len(raw); i++ {
		if idx := strings.IndexByte(base62, raw[i]); idx >= 0 && idx < 60 { // 60 = 3 x 20: unbiased
			b.WriteByte(userCodeAlphabet[idx%20])
		}
	}
	return b.String()
}

// DeviceStart is the answer of a device authorization request.
type DeviceStart struct {
	DeviceCode string
	UserCode   string // formatted XXXX-XXXX
	ExpiresIn  int
	Interval   int
}

// StartDevice opens a device authorization for the app with scopes.
func (o *OAuth) StartDevice(
	ctx context.Context,
	res tenant.Resolution,
	clientID string,
	scopes Scopes,
) (DeviceStart, error) {
	device := "pmd_" + pmapi.RandomBase62(40)
	user := newUserCode()
	expires := time.Now().Add(o.DeviceTTL)
	if _, err := o.Dir.Pool().Exec(ctx, `insert into oauth_user_codes (user_code_hash, workspace_id, expires_at)
		values ($1, $2, $3)`, hashSecret(user), res.Workspace.ID, expires); err != nil {
		return DeviceStart{}, err
	}
	err := res.Shard.Tx(ctx, res.Workspace.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(
			ctx,
			`insert into oauth_device_codes (workspace_id, id, client_id, device_code_hash, user_code_hash, scopes,
				interval_seconds, expires_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8)`,
			res.Workspace.ID,
			pmapi.NewID(),
			clientID,
			hashSecret(device),
			hashSecret(user),
			scopes.Names(),
			int(o.Interval.Seconds()),
			expires,
		)
		return err
	})
	return DeviceStart{
		DeviceCode: device,
		UserCode:   user[:4] + "-" + user[4:],
		ExpiresIn:  int(o.DeviceTTL.Seconds()),
		Interval:   int(o.Interval.Seconds()),
	}, err
}

// WorkspaceOfUserCode finds which workspace issued a user code.
func (o *OAuth) WorkspaceOfUserCode(ctx context.Context, code string) (tenant.Workspace, error) {
	var ws uuid.UUID
	err := o.Dir.Pool().
		QueryRow(ctx, `select workspace_id from oauth_user_codes where user_code_hash = $1 and expires_at > now()`,
			hashSecret(NormalizeUserCode(code))).
		Scan(&ws)
	if errors.Is(err, pgx.ErrNoRows) {
		return tenant.Workspace{}, pmapi.NotFound("pending authorization")
	}
	if err != nil {
		return tenant.Workspace{}, err
	}
	return o.Dir.Get(ctx, ws)
}

// PendingApp returns which app asks, and for what, behind a pending user code of
// workspace ws (for the verification page).
func (o *OAuth) PendingApp(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	code string,
) (string, Scopes, error) {
	var client string
	var scopes []string
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select client_id, scopes from oauth_device_codes where workspace_id = $1 and user_code_hash = $2
			and status = 'PENDING' and expires_at > now()`, ws, hashSecret(NormalizeUserCode(code))).
			QueryRow(func(r pgx.Row) error {
				err := r.Scan(&client, &scopes)
				if errors.Is(err, pgx.ErrNoRows) {
					return pmapi.NotFound("pending authorization")
				}
				return err
			})
	})
	return client, scopesFromDB(scopes), err
}

// Decide approves or denies a pending user code on behalf of user. Unknown,
// expired, decided and other workspaces' codes are all NOT_FOUND alike.
func (o *OAuth) Decide(ctx context.Context, shard *tenant.Shard, user User, code string, approve bool) error {
	ws := user.WorkspaceID
	return shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var id uuid.UUID
		var client string
		var scopes []string
		err := tx.QueryRow(ctx, `select id, client_id, scopes from oauth_device_codes
			where workspace_id = $1 and user_code_hash = $2
			and status = 'PENDING' and expires_at > now() for update`, ws, hashSecret(NormalizeUserCode(code))).
			Scan(&id, &client, &scopes)
		if errors.Is(err, pgx.ErrNoRows) {
			return pmapi.NotFound("pending authorization")
		}
		if err != nil {
			return err
		}
		if !approve {
			_, err = tx.Exec(
				ctx,
				`update oauth_device_codes set status = 'DENIED', user_id = $3 where workspace_id = $1 and id = $2`,
				ws,
				id,
				user.ID,
			)
			if err != nil {
				return err
			}
			return audit.Record(ctx, tx, ws, audit.DeviceDenied, audit.Target{Type: "app", ID: client})
		}
		grant := pmapi.NewID()
		if _, err := tx.Exec(ctx, `insert into oauth_grants (workspace_id, id, client_id, user_id, scopes)
			values ($1, $2, $3, $4, $5)`, ws, grant, client, user.ID, scopes); err != nil {
			return err
		}
		_, err = tx.Exec(
			ctx,
			`update oauth_device_codes set status = 'APPROVED', user_id = $3, grant_id = $4 where workspace_id = $1 and id = $2`,
			ws,
			id,
			user.ID,
			grant,
		)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.DeviceApproved, audit.Target{Type: "grant", ID: grant.String()})
	})
}

// Tokens is a successful token response.
type Tokens struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    int
	Scopes       Scopes
}

// AccessClaims are the RFC 9068 claims plus the workspace and grant.
type AccessClaims struct {
	jwt.RegisteredClaims
	ClientID  string `json:"client_id"`
	Scope     string `json:"scope"`
	Workspace string `json:"ws"`
	Grant     string `json:"gid"`
}

func (o *OAuth) issue(
	ctx context.Context,
	tx pgx.Tx,
	ws uuid.UUID,
	client string,
	grant, user uuid.UUID,
	scopes Scopes,
) (Tokens, error) {
	now := time.Now()
	claims := AccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    o.Issuer,
			Subject:   user.String(),
			Audience:  jwt.ClaimStrings{o.Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(o.AccessTTL)),
			ID:        pmapi.NewID().String(),
		},
		ClientID: client, Scope: strings.Join(scopes.Names(), " "), Workspace: ws.String(), Grant: grant.String(),
	}
	access, err := o.Ring.Sign(ctx, claims)
	if err != nil {
		return Tokens{}, err
	}
	refresh := "pmr_" + pmapi.RandomBase62(40)
	if _, err := tx.Exec(ctx, `insert into oauth_refresh_tokens
		(workspace_id, id, grant_id, token_hash, scopes, expires_at) values ($1, $2, $3, $4, $5, $6)`,
		ws, pmapi.NewID(), grant, hashSecret(refresh), scopes.Names(), now.Add(o.RefreshTTL)); err != nil {
		return Tokens{}, err
	}
	return Tokens{AccessToken: access, RefreshToken: refresh, ExpiresIn: int(o.AccessTTL.Seconds()), Scopes: scopes}, nil
}

// revokeGrant revokes a grant (and so every token of its family) and tells
// every instance.
func revokeGrant(ctx context.Context, tx pgx.Tx, ws, grant uuid.UUID) error {
	// A grant revoked again keeps its first time; the condition does what
	// coalesce(revoked_at, now()) did, which Citus refuses in an UPDATE.
	tag, err := tx.Exec(ctx, `update oauth_grants set revoked_at = now()
		where workspace_id = $1 and id = $2 and revoked_at is null`, ws, grant)
	if err != nil {
		return err
	}
	if tag.RowsAffected() > 0 {
		if err := audit.Record(ctx, tx, ws, audit.TokenRevoked, audit.Target{Type: "grant", ID: grant.String()}); err != nil {
			return err
		}
	}
	return tenant.Invalidate(ctx, tx, tenant.Invalidation{Kind: "grant", ID: grant.String()})
}

// RedeemDevice is the device_code grant (RFC 8628 section 3.4/3.5).
func (o *OAuth) RedeemDevice(ctx context.Context, res tenant.Resolution, clientID, deviceCode string) (Tokens, error) {
	ws := res.Workspace.ID
	return exchange(ctx, res, func(tx pgx.Tx) (Tokens, *TokenError, error) {
		var (
			id, user      uuid.UUID
			grant         *uuid.UUID
			owner, status string
			scopes        []string
			interval      int
			lastPoll      *time.Time
			expires       time.Time
			userID        *uuid.UUID
		)
		err := tx.QueryRow(ctx, `select id, client_id, status, scopes, interval_seconds, last_polled_at, expires_at,
				grant_id, user_id
			from oauth_device_codes where workspace_id = $1 and device_code_hash = $2 for update`, ws, hashSecret(deviceCode)).
			Scan(&id, &owner, &status, &scopes, &interval, &lastPoll, &expires, &grant, &userID)
		if tokErr, err := unknown(err, owner, clientID, "device code"); tokErr != nil || err != nil {
			return Tokens{}, tokErr, err
		}
		now := time.Now()
		switch {
		case status == "REDEEMED":
			// A second redemption: someone else has the code. Revoke what it gave.
			return Tokens{}, tokenErr(
					"invalid_grant",
					"the device code was already used; its tokens are revoked",
				), revokeGrant(
					ctx,
					tx,
					ws,
					*grant,
				)
		case !now.Before(expires):
			return Tokens{}, tokenErr("expired_token", "the device code has expired; start again"), nil
		case status == "DENIED":
			return Tokens{}, tokenErr("access_denied", "the user denied the authorization"), nil
		case status == "PENDING":
			if lastPoll != nil && now.Sub(*lastPoll) < time.Duration(interval)*time.Second {
				_, err := tx.Exec(ctx, `update oauth_device_codes set interval_seconds = interval_seconds + 5, last_polled_at = $3
					where workspace_id = $1 and id = $2`, ws, id, now)
				return Tokens{}, tokenErr("slow_down", "polling faster than the interval; it is now 5 seconds longer"), err
			}
			_, err := tx.Exec(
				ctx,
				`update oauth_device_codes set last_polled_at = $3 where workspace_id = $1 and id = $2`,
				ws,
				id,
				now,
			)
			return Tokens{}, tokenErr("authorization_pending", "the user has not decided yet"), err
		}
		user = *userID
		if _, err := tx.Exec(ctx, `update oauth_device_codes set status = 'REDEEMED'
			where workspace_id = $1 and id = $2`, ws, id); err != nil {
			return Tokens{}, nil, err
		}
		out, err := o.issue(ctx, tx, ws, clientID, *grant, user, scopesFromDB(scopes))
		return out, nil, err
	})
}

// Refresh is the refresh_token grant: the token rotates; a spent token used
// again after ReuseGrace revokes its whole family (RFC 9700 section 4.14.2).
func (o *OAuth) Refresh(
	ctx context.Context,
	res tenant.Resolution,
	clientID, token string,
	narrow *Scopes,
) (Tokens, error) {
	ws := res.Workspace.ID
	return exchange(ctx, res, func(tx pgx.Tx) (Tokens, *TokenError, error) {
		var (
			id, grant, user uuid.UUID
			owner           string
			scopes          []string
			used, revoked   *time.Time
			expires         time.Time
		)
		err := tx.QueryRow(ctx, `select r.id, r.grant_id, g.client_id, g.user_id, r.scopes, r.used_at, g.revoked_at,
				r.expires_at
			from oauth_refresh_tokens r join oauth_grants g on g.workspace_id = r.workspace_id and g.id = r.grant_id
			where r.workspace_id = $1 and r.token_hash = $2 for update of r`, ws, hashSecret(token)).
			Scan(&id, &grant, &owner, &user, &scopes, &used, &revoked, &expires)
		if tokErr, err := unknown(err, owner, clientID, "refresh token"); tokErr != nil || err != nil {
			return Tokens{}, tokErr, err
		}
		now := time.Now()
		switch {
		case revoked != nil:
			return Tokens{}, tokenErr("invalid_grant", "the grant was revoked"), nil
		case !now.Before(expires):
			return Tokens{}, tokenErr("invalid_grant", "the refresh token has expired"), nil
		case used != nil && now.Sub(*used) > o.ReuseGrace:
			return Tokens{}, tokenErr(
					"invalid_grant",
					"the refresh token was already used; every token of this grant is revoked",
				), revokeGrant(
					ctx,
					tx,
					ws,
					grant,
				)
		}
		s := scopesFromDB(scopes)
		if narrow != nil {
			if !s.Has(*narrow) {
				return Tokens{}, tokenErr("invalid_scope", "a refresh cannot widen the granted scopes"), nil
			}
			s = *narrow
		}
		if used == nil {
			if _, err := tx.Exec(ctx, `update oauth_refresh_tokens set used_at = $3
				where workspace_id = $1 and id = $2`, ws, id, now); err != nil {
				return Tokens{}, nil, err
			}
		}
		out, err := o.issue(ctx, tx, ws, clientID, grant, user, s)
		return out, nil, err
	})
}

// exchange runs one token exchange in a transaction of the caller's
// workspace: decide reads the locked row and answers the tokens issued or the
// RFC 6749 error, whose transaction still commits what decide wrote (a
// revoked family, a slower interval).
func exchange(
	ctx context.Context,
	res tenant.Resolution,
	decide func(tx pgx.Tx) (Tokens, *TokenError, error),
) (Tokens, error) {
	var out Tokens
	var tokErr *TokenError
	err := res.Shard.Tx(ctx, res.Workspace.ID, func(tx pgx.Tx) error {
		var err error
		out, tokErr, err = decide(tx)
		return err
	})
	if err != nil {
		return Tokens{}, err
	}
	if tokErr != nil {
		return Tokens{}, tokErr
	}
	return out, nil
}

// unknown is a token exchange's answer to a failed look-up: no row, or the
// row of another client, is an unknown what.
func unknown(err error, owner, clientID, what string) (*TokenError, error) {
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner != clientID) {
		return tokenErr("invalid_grant", "unknown "+what), nil
	}
	return nil, err
}

// parse verifies an access token's signature and claims.
func (o *OAuth) parse(ctx context.Context, raw string) (*AccessClaims, error) {
	claims := &AccessClaims{}
	checks := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"ES256"}),
		jwt.WithIssuer(o.Issuer),
		jwt.WithAudience(o.Audience),
		jwt.WithExpirationRequired(),
	}
	tok, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		if typ, _ := t.Header["typ"].(string); !strings.EqualFold(typ, "at+jwt") {
			return nil, errors.New("typ is not at+jwt")
		}
		kid, _ := t.Header["kid"].(string)
		return o.Ring.publicKey(ctx, kid)
	}, checks...)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return claims, pmapi.Errorf(pmapi.CodeTokenExpired, "the access token has expired")
		}
		return nil, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token is not valid")
	}
	if !tok.Valid {
		return nil, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token is not valid")
	}
	return claims, nil
}

// Revoke is RFC 7009: a refresh or access token of the client revokes its grant
// (and so every token of the family). Unknown tokens are not an error.
func (o *OAuth) Revoke(ctx context.Context, res tenant.Resolution, clientID, token string) error {
	ws := res.Workspace.ID
	grant, ok := uuid.Nil, false
	if claims, err := o.parse(ctx, token); err == nil && claims.ClientID == clientID && claims.Workspace == ws.String() {
		grant, _ = uuid.Parse(claims.Grant)
		ok = true
	}
	return res.Shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if !ok {
			err := tx.QueryRow(ctx, `select r.grant_id from oauth_refresh_tokens r
				join oauth_grants g on g.workspace_id = r.workspace_id and g.id = r.grant_id
				where r.workspace_id = $1 and r.token_hash = $2 and g.client_id = $3`, ws, hashSecret(token), clientID).
				Scan(&grant)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		return revokeGrant(ctx, tx, ws, grant)
	})
}

// Introspection is RFC 7662's answer.
type Introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Sub       string `json:"sub,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Jti       string `json:"jti,omitempty"`
	TokenType string `json:"token_type,omitempty"`
}

// Introspect answers for the client's own access tokens; anything else is
// inactive.
func (o *OAuth) Introspect(ctx context.Context, res tenant.Resolution, clientID, token string) Introspection {
	claims, err := o.parse(ctx, token)
	if err != nil || claims.ClientID != clientID || claims.Workspace != res.Workspace.ID.String() {
		return Introspection{}
	}
	st, err := o.grant(ctx, res, claims)
	if err != nil || st.revoked {
		return Introspection{}
	}
	return Introspection{
		Active:    true,
		Scope:     claims.Scope,
		ClientID:  claims.ClientID,
		Sub:       claims.Subject,
		Exp:       claims.ExpiresAt.Unix(),
		Iat:       claims.IssuedAt.Unix(),
		Jti:       claims.ID,
		TokenType: "Bearer",
	}
}

// grantState is what the verifier caches per grant.
type grantState struct {
	revoked   bool
	appScopes Scopes
	appStatus string
	appFound  bool
	loadedAt  time.Time
	client    string
	ws        tenant.Workspace
	shard     *tenant.Shard
}

func (o *OAuth) grant(ctx context.Context, res tenant.Resolution, claims *AccessClaims) (*grantState, error) {
	id, err := uuid.Parse(claims.Grant)
	if err != nil {
		return nil, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token is not valid")
	}
	o.mu.Lock()
	st := o.grants[id]
	o.mu.Unlock()
	if st != nil && time.Since(st.loadedAt) < time.Minute {
		return st, nil
	}
	st = &grantState{client: claims.ClientID, ws: res.Workspace, shard: res.Shard, loadedAt: time.Now()}
	err = res.Shard.Read(ctx, res.Workspace.ID, func(b *pgx.Batch) {
		b.Queue(`select g.revoked_at is not null, a.client_id is not null, coalesce(a.scopes, '{}'),
				coalesce(a.status, 'DISABLED')
			from oauth_grants g left join apps a on a.workspace_id = g.workspace_id and a.client_id = g.client_id
			where g.workspace_id = $1 and g.id = $2`, res.Workspace.ID, id).
			QueryRow(func(r pgx.Row) error {
				var scopes []string
				err := r.Scan(&st.revoked, &st.appFound, &scopes, &st.appStatus)
				if errors.Is(err, pgx.ErrNoRows) {
					st.revoked = true
					return nil
				}
				st.appScopes = scopesFromDB(scopes)
				return err
			})
	})
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.grants[id] = st
	o.mu.Unlock()
	return st, nil
}

// VerifyBearer checks `Authorization: Bearer <jwt>` for a resource call.
func (o *OAuth) VerifyBearer(ctx context.Context, clientID, raw string) (Principal, error) {
	claims, err := o.parse(ctx, raw)
	if err != nil {
		return Principal{}, err
	}
	if claims.ClientID != clientID {
		return Principal{}, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token belongs to another client")
	}
	res, err := o.Dir.Resolve(ctx, clientID)
	if err != nil || res.Workspace.ID.String() != claims.Workspace {
		return Principal{}, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token is not valid for this client")
	}
	st, err := o.grant(ctx, res, claims)
	if err != nil {
		return Principal{}, err
	}
	switch {
	case st.revoked || !st.appFound:
		return Principal{}, pmapi.Errorf(pmapi.CodeInvalidToken, "the access token was revoked")
	case res.Workspace.Status == tenant.StatusSuspended:
		return Principal{}, pmapi.Errorf(pmapi.CodeWorkspaceSuspended, "this workspace is suspended")
	case st.appStatus != AppActive:
		return Principal{}, pmapi.Errorf(pmapi.CodeAppDisabled, "the app is disabled")
	}
	tokenScopes, _ := ParseScopes("scope", strings.Fields(claims.Scope))
	sub, _ := uuid.Parse(claims.Subject)
	grant, _ := uuid.Parse(claims.Grant)
	// KeyID carries the grant: rate limits are per credential, and the grant is
	// the OAuth credential.
	return Principal{Workspace: res.Workspace, Shard: res.Shard, ClientID: clientID, Credential: "oauth",
		KeyID: grant, Scopes: tokenScopes & st.appScopes, Subject: sub}, nil
}

// InvalidateGrants drops cached grant states an invalidation concerns.
func (o *OAuth) InvalidateGrants(inv tenant.Invalidation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, st := range o.grants {
		if (inv.Kind == "grant" && id.String() == inv.ID) || (inv.Kind == "client" && st.client == inv.ID) ||
			(inv.Kind == "workspace" && st.ws.ID.String() == inv.ID) {
			delete(o.grants, id)
		}
	}
}

// ResetGrants drops every cached grant state.
func (o *OAuth) ResetGrants() {
	o.mu.Lock()
	o.grants = map[uuid.UUID]*grantState{}
	o.mu.Unlock()
}
