package main

import (
	"strings"
	"testing"
)

// TestHalfAnOIDCConfigurationIsRefused: sign-in is all three settings or none;
// one or two of them is an error naming what is missing, before anything
// starts.
func TestHalfAnOIDCConfigurationIsRefused(t *testing.T) {
	set := func(issuer, id, secret string) {
		t.Setenv("PMAPI_OIDC_ISSUER", issuer)
		t.Setenv("PMAPI_OIDC_CLIENT_ID", id)
		t.Setenv("PMAPI_OIDC_CLIENT_SECRET", secret)
	}
	set("", "", "")
	if c, err := oidcConfig(); c != nil || err != nil {
		t.Errorf("none set: %v %v", c, err)
	}
	set("https://accounts.google.com", "id", "")
	if _, err := oidcConfig(); err == nil || !strings.Contains(err.Error(), "PMAPI_OIDC_CLIENT_SECRET missing") {
		t.Errorf("no secret: %v", err)
	}
	set("", "", "secret")
	if _, err := oidcConfig(); err == nil ||
		!strings.Contains(err.Error(), "PMAPI_OIDC_ISSUER and PMAPI_OIDC_CLIENT_ID missing") {
		t.Errorf("only the secret: %v", err)
	}
	set("not a url", "id", "secret")
	if _, err := oidcConfig(); err == nil || !strings.Contains(err.Error(), "PMAPI_OIDC_ISSUER must be") {
		t.Errorf("a bad issuer: %v", err)
	}
	set("https://accounts.google.com", "id", "secret")
	if c, err := oidcConfig(); err != nil || c.Issuer != "https://accounts.google.com" || c.ClientID != "id" {
		t.Errorf("all three: %+v %v", c, err)
	}
	// loadConfig, which every command runs first, refuses half as well.
	set("https://accounts.google.com", "", "")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "half configured") {
		t.Errorf("loadConfig with half: %v", err)
	}
}
