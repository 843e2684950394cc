// Package quota keeps the operator's limits of each workspace (apps, keys
// per app, webhook subscriptions, requests a month) and holds a creation to
// them: the creation locks the workspace's quota row while it counts and
// inserts, so concurrent creations are served one after another and never
// overshoot a limit together (docs/decisions/audit-and-quotas.md). The rows
// counted belong to other packages, which count their own tables.
package quota

import "github.com/pmapi/pmapi"

// Kind names one quota, as the API spells it.
type Kind string

// The quotas.
const (
	Apps             Kind = "apps"
	KeysPerApp       Kind = "keysPerApp"
	Webhooks         Kind = "webhooks"
	RequestsPerMonth Kind = "requestsPerMonth"
)

// Kinds lists every quota in the order the API shows them.
func Kinds() []Kind { return []Kind{Apps, KeysPerApp, Webhooks, RequestsPerMonth} }

// MaxLimit bounds a limit: beyond it a quota is better left unlimited (null).
const MaxLimit = 1 << 40

// Limits are a workspace's quotas; nil is unlimited.
type Limits struct {
	Apps             *int64
	KeysPerApp       *int64
	Webhooks         *int64
	RequestsPerMonth *int64
}

// Of is the limit of kind k.
func (l Limits) Of(k Kind) *int64 {
	switch k {
	case Apps:
		return l.Apps
	case KeysPerApp:
		return l.KeysPerApp
	case Webhooks:
		return l.Webhooks
	case RequestsPerMonth:
		return l.RequestsPerMonth
	}
	return nil
}

// Validate refuses a negative or absurd limit, naming its field.
func (l Limits) Validate() error {
	for _, k := range Kinds() {
		if v := l.Of(k); v != nil && (*v < 0 || *v > MaxLimit) {
			return pmapi.Invalid(string(k), "%s must be from 0 to %d, or null for unlimited", k, int64(MaxLimit))
		}
	}
	return nil
}

// Exceeded is the answer to a creation that would go over limit with used
// already there: 429 QUOTA_EXCEEDED naming the quota. No Retry-After: only
// the operator or a deletion makes room.
func Exceeded(k Kind, limit, used int64) error {
	return pmapi.Errorf(pmapi.CodeQuotaExceeded,
		"the workspace has reached its %s quota (%d); delete one or ask the operator to raise it", k, limit).
		With("quota", string(k)).With("limit", limit).With("used", used)
}
