package observability

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Version is the build's version, set with -ldflags "-X ...observability.Version=v1.2.3";
// otherwise the module version or the VCS revision recorded by the Go toolchain.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return s.Value[:12]
			}
		}
		if bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "dev"
}

func init() {
	promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pmapi_build_info",
		Help: "Always 1; the labels say which build is running.",
	}, []string{"version", "goversion"}).WithLabelValues(version(), runtime.Version()).Set(1)
}

// PoolSource names a connection pool for the pool collector.
type PoolSource struct {
	Shard string
	Pool  *pgxpool.Pool
}

// poolCollector reports each shard's pgx pool at scrape time.
type poolCollector struct {
	pools []PoolSource
	conns *prometheus.Desc
	waits *prometheus.Desc
}

// RegisterPools exports connection counts of every shard's pool (labels: shard,
// state = acquired, idle, constructing, max) and the cumulative count of
// acquires that had to wait. It replaces an earlier registration, so a process
// that reopens its pools (tests) keeps one collector.
func RegisterPools(pools []PoolSource) {
	c := &poolCollector{
		pools: pools,
		conns: prometheus.NewDesc(
			"pmapi_db_pool_connections",
			"Connections of a shard's pool, by state.",
			[]string{"shard", "state"},
			nil,
		),
		waits: prometheus.NewDesc(
			"pmapi_db_pool_empty_acquire_total",
			"Acquires that waited because the pool was empty.",
			[]string{"shard"},
			nil,
		),
	}
	Reregister(c)
}

// Reregister registers c with the default registry, replacing an earlier
// collector with the same descriptions (unregistering goes by descriptions), so
// a process that builds its server twice (tests) keeps one.
func Reregister(c prometheus.Collector) {
	prometheus.Unregister(c)
	prometheus.MustRegister(c)
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.waits
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.pools {
		st := p.Pool.Stat()
		for state, v := range map[string]int32{
			"acquired": st.AcquiredConns(), "idle": st.IdleConns(), "constructing": st.ConstructingConns(), "max": st.MaxConns(),
		} {
			ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(v), p.Shard, state)
		}
		ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(st.EmptyAcquireCount()), p.Shard)
	}
}

// MetricsServer serves /metrics (Prometheus text format), /healthz and
// net/http/pprof's /debug/pprof/ on their own listener, so scrapes never compete
// with API traffic and the worker process, which has no API, still has a health
// endpoint and profiles.
type MetricsServer struct {
	srv *http.Server
	ln  net.Listener
}

// ListenMetrics binds addr.
func ListenMetrics(addr string) (*MetricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	// Profiles live here, beside /metrics and never on the API port: the
	// listener is for operators (bind it to loopback or a cluster network).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &MetricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}, nil
}

// Addr is the bound address.
func (m *MetricsServer) Addr() string { return m.ln.Addr().String() }

// Serve runs until Shutdown.
func (m *MetricsServer) Serve(log *slog.Logger) {
	if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics server", "error", err.Error())
	}
}

// Shutdown stops the listener.
func (m *MetricsServer) Shutdown(ctx context.Context) error { return m.srv.Shutdown(ctx) }
