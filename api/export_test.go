package api_test

import "github.com/pmapi/pmapi/authz"

func authzNewKey() string { return authz.NewAPIKey() }
