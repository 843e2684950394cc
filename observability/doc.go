// Package observability sets up what operators watch: JSON logs through log/slog
// (and, as the server grows, Prometheus metrics and health).
package observability
