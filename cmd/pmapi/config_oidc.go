package main

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/pmapi/pmapi/console"
)

// oidcConfig reads the identity provider the console signs people in with:
// all of PMAPI_OIDC_ISSUER, PMAPI_OIDC_CLIENT_ID and PMAPI_OIDC_CLIENT_SECRET,
// or none (sign-in off). Half a configuration is an error that names what is
// missing, so a deployment never starts with a sign-in that cannot work.
func oidcConfig() (*console.OIDCConfig, error) {
	names := []string{"PMAPI_OIDC_ISSUER", "PMAPI_OIDC_CLIENT_ID", "PMAPI_OIDC_CLIENT_SECRET"}
	var set, missing []string
	for _, n := range names {
		if strings.TrimSpace(os.Getenv(n)) == "" {
			missing = append(missing, n)
		} else {
			set = append(set, n)
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("console sign-in is half configured: %s set but %s missing (set all three, or none to leave "+
			"sign-in off; docs/operations.md)", strings.Join(set, ", "), strings.Join(missing, " and "))
	}
	issuer := strings.TrimSpace(os.Getenv("PMAPI_OIDC_ISSUER"))
	if u, err := url.Parse(issuer); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("PMAPI_OIDC_ISSUER must be the provider's issuer URL, such as https://accounts.google.com")
	}
	return &console.OIDCConfig{Issuer: issuer, ClientID: strings.TrimSpace(os.Getenv("PMAPI_OIDC_CLIENT_ID")),
		ClientSecret: os.Getenv("PMAPI_OIDC_CLIENT_SECRET")}, nil
}

// consoleKey signs the console's CSRF tokens; derived from PMAPI_SECRET_KEY,
// so every instance of a deployment has the same.
func consoleKey(secretKey string) []byte {
	k := sha256.Sum256([]byte("pmapi console csrf key\x00" + secretKey))
	return k[:]
}
