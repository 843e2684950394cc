package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// sampleBanner is the banner README.md shows: a persistent run on one
// PostgreSQL, with made-up credentials.
var sampleBanner = banner{
	Base:            "http://127.0.0.1:8080",
	Metrics:         "http://127.0.0.1:41517/metrics",
	AdminToken:      "pmadm_Qe3wZ0hX7LkYbN2vR8sT4uJ6mC1dF9gA",
	WebhookLoopback: true,
	DataDir:         ".pmapi",
	EnvFile:         ".pmapi/dev.env",
	ConsoleLink:     "http://127.0.0.1:8080/console/dev/signin/Hk3pW9qLz2VxR7mT1nB5cY8dF4gJ6sA0",
	Demo: demo{
		WorkspaceID:     "01a2067a-08b3-7dd9-85e5-1da4831daa78",
		ConsoleClientID: "pm_cli_vqlJCIcJlqta5N44JCGh",
		Email:           "demo@example.com",
		SID:             "pms_k2Jd8RzQw4Xn7VbT1mYc5Hs9LpG3fA6eUo0iKtNr",
		AppClientID:     "pm_cli_3LmZk8QwR1xT5nV7bY2c",
		APIKey:          "pmk_7fKq2LmN9pR4sT1vW8xY3zA6bC5dE0gHjRw1Xk",
	},
}

// TestREADMEShowsTheBanner holds README.md's sample banner to what printBanner
// writes: same lines, same order, same wording.
func TestREADMEShowsTheBanner(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```\n(\npmapi dev is ready at .*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no code block starting with the banner's first line")
	}
	var out strings.Builder
	sampleBanner.write(&out)
	if got, want := string(block[1]), strings.TrimRight(out.String(), "\n")+"\n"; got != want {
		t.Errorf("README.md's banner differs from the real one; replace it with:\n%s", want)
	}
}
