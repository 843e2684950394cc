package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/pmapi/pmapi/api"
)

// quotaFlags are the quota flags of `pmapi admin workspace quotas`, in the
// order of the request's fields.
var quotaFlags = []string{"apps", "keys-per-app", "webhooks", "requests-per-month"}

// quotasRequest is GET path without a quota flag, and with any a PUT that
// sets all four: the route replaces every quota, so an omitted one is
// unlimited, as "unlimited" says.
func quotasRequest(fs *flag.FlagSet, path string, limits map[string]*string) (string, string, any, error) {
	given := false
	fs.Visit(func(f *flag.Flag) { _, ok := limits[f.Name]; given = given || ok })
	if !given {
		return "GET", path, nil, nil
	}
	parsed := map[string]*int64{}
	for _, name := range quotaFlags {
		v := *limits[name]
		if v == "" || v == "unlimited" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", "", nil, fmt.Errorf("--%s must be a number or unlimited, not %q", name, v)
		}
		parsed[name] = &n
	}
	return "PUT", path, api.QuotasRequest{Apps: parsed["apps"], KeysPerApp: parsed["keys-per-app"],
		Webhooks: parsed["webhooks"], RequestsPerMonth: parsed["requests-per-month"]}, nil
}
