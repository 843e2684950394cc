package pgcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// findBinaries returns the directory holding initdb and pg_ctl: PATH first, then
// the newest /usr/lib/postgresql/<version>/bin (Debian keeps them off PATH).
// binariesGlob is where Debian and Ubuntu install the server binaries (a
// variable so a test can look somewhere empty).
var binariesGlob = "/usr/lib/postgresql/*/bin"

func findBinaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob(binariesGlob)
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if fileExists(filepath.Join(d, "initdb")) && fileExists(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries not found")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// runAs carries the identity the server binaries run under: they refuse to run as
// root, so as root they run as the postgres user.
type runAs struct {
	cred     *syscall.Credential
	uid, gid int
}

func serverIdentity() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{uid: -1, gid: -1}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, fmt.Errorf("running as root needs a 'postgres' user to run the server binaries: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return runAs{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid: uid, gid: gid}, nil
}

func (r runAs) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	// The server must not inherit a locale that initdb cannot find, nor PG*
	// variables meant for a client.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C"}
	return cmd
}

func (r runAs) own(path string) error {
	if r.cred == nil {
		return nil
	}
	return os.Chown(path, r.uid, r.gid)
}

// startLocal runs a private cluster: initdb on first use, then pg_ctl start on a
// free loopback port with unix sockets off, password authentication on.
func startLocal(ctx context.Context, bin string, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	cb, err := claimBase(opts.DataDir, "pmapi-pg-")
	if err != nil {
		return nil, err
	}
	who, base, release, password := cb.who, cb.dir, cb.release, cb.password
	if note, err := stopLeftover(ctx, bin, who, filepath.Join(base, "data")); err != nil {
		release()
		return nil, err
	} else if note != "" {
		fmt.Fprintln(opts.Log, note)
	}
	var extra []string
	if len(opts.Preload) > 0 {
		extra = append(extra, "-c shared_preload_libraries="+strings.Join(opts.Preload, ","))
	}
	n, err := startNode(ctx, bin, who, base, filepath.Join(base, "superuser.password"), opts.Durable, extra)
	if err != nil {
		release()
		return nil, err
	}
	fmt.Fprintf(opts.Log, "postgres: private cluster in %s on 127.0.0.1:%d\n", n.dataDir, n.port)
	stop := func(ctx context.Context) error {
		defer release()
		return n.stop(ctx)
	}
	return &Server{AdminURL: nodeAdminURL(password, n.port), Source: "binaries", stop: stop, restart: n.crashRestart}, nil
}

// claimedBase is a launched server's directory, locked for this process, with
// the user the server runs as and its superuser's password.
type claimedBase struct {
	who      runAs
	dir      string
	release  func()
	password string
}

// claimBase opens the base (openBase) and reads or makes the superuser's
// password in it; on failure nothing stays locked.
func claimBase(dataDir, tempPrefix string) (claimedBase, error) {
	who, err := serverIdentity()
	if err != nil {
		return claimedBase{}, err
	}
	dir, release, err := openBase(dataDir, tempPrefix, who)
	if err != nil {
		return claimedBase{}, err
	}
	password, err := superuserPassword(dir, who)
	if err != nil {
		release()
		return claimedBase{}, err
	}
	return claimedBase{who: who, dir: dir, release: release, password: password}, nil
}

// openBase makes the directory a launched server lives in (dataDir, or a new
// temporary one removed by release) and locks it for this process.
func openBase(dataDir, tempPrefix string, who runAs) (base string, release func(), err error) {
	ephemeral := dataDir == ""
	if ephemeral {
		if base, err = os.MkdirTemp("", tempPrefix); err != nil {
			return "", nil, err
		}
	} else if base, err = filepath.Abs(dataDir); err != nil {
		return "", nil, err
	}
	// Parents must be traversable by the server's user; the directory itself is
	// private to it.
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", nil, err
	}
	if err := who.own(base); err != nil {
		return "", nil, err
	}
	cleanup := func() {
		if ephemeral {
			os.RemoveAll(base)
		}
	}
	lock, err := lockDir(base)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return base, func() {
		lock.Close()
		cleanup()
	}, nil
}

// node is one postgres that pg_ctl started from a data directory of its own.
type node struct {
	bin     string
	who     runAs
	dataDir string
	port    int
}

// startNode initialises dir/data on first use (the superuser's password read
// from pwFile) and starts it on a free loopback port with the settings every
// launched server shares, then extra.
func startNode(
	ctx context.Context,
	bin string,
	who runAs,
	dir, pwFile string,
	durable bool,
	extra []string,
) (node, error) {
	n := node{bin: bin, who: who, dataDir: filepath.Join(dir, "data")}
	if !fileExists(filepath.Join(n.dataDir, "PG_VERSION")) {
		if err := initCluster(ctx, bin, who, pwFile, n.dataDir); err != nil {
			return n, err
		}
	}
	// The free port is free when freePort looks, not necessarily when the
	// server binds it: another cluster starting at the same time (make test
	// runs packages in parallel) may take it first, and the server then
	// exits with "could not create any TCP/IP sockets". A new port is tried.
	for attempt := 1; ; attempt++ {
		err := n.start(ctx, durable, dir, extra)
		if err == nil || attempt == 3 || !errors.Is(err, errPortTaken) {
			return n, err
		}
	}
}

// errPortTaken marks a start that failed because the port was taken.
var errPortTaken = errors.New("the port was taken before the server bound it")

// start starts the initialised node on a free port.
func (n *node) start(ctx context.Context, durable bool, dir string, extra []string) error {
	port, err := pickPort()
	if err != nil {
		return err
	}
	n.port = port
	settings := []string{
		"-p " + strconv.Itoa(port),
		"-c listen_addresses=127.0.0.1",
		"-c unix_socket_directories=",
		"-c max_connections=400",
		"-c shared_buffers=128MB",
	}
	if !durable {
		settings = append(settings, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off")
	}
	settings = append(settings, extra...)
	logFile := filepath.Join(dir, "server.log")
	logged := fileSize(logFile)
	start := n.who.command(ctx, filepath.Join(n.bin, "pg_ctl"), "-D", n.dataDir, "-w", "-t", "120",
		"-l", logFile, "-o", strings.Join(settings, " "), "start")
	if out, err := start.CombinedOutput(); err != nil {
		tail, _ := os.ReadFile(logFile)
		if int64(len(tail)) >= logged && strings.Contains(string(tail[logged:]), "could not create any TCP/IP sockets") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, lastLines(string(tail), 20))
	}
	return nil
}

// fileSize is path's size, 0 when it does not exist yet.
func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// stop shuts the node down cleanly when it can. A fast shutdown waits for
// every walsender to hand its WAL over, and a Citus move's subscription that
// stopped applying never takes it, so after 30 s the node is stopped in
// immediate mode: its next start replays the WAL, as after a crash.
func (n node) stop(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	fast := n.who.command(ctx, filepath.Join(n.bin, "pg_ctl"), "-D", n.dataDir, "-m", "fast", "-t", "30", "-w", "stop")
	out, err := fast.CombinedOutput()
	if err == nil {
		return nil
	}
	immediate := n.who.command(ctx, filepath.Join(n.bin, "pg_ctl"), "-D", n.dataDir, "-m", "immediate", "-w", "stop")
	if out2, err2 := immediate.CombinedOutput(); err2 != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s; immediate: %v: %s", err, out, err2, out2)
	}
	return nil
}

// nodeAdminURL is the superuser's URL of a launched server.
func nodeAdminURL(password string, port int) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

func initCluster(ctx context.Context, bin string, who runAs, pwFile, dataDir string) error {
	cmd := who.command(ctx, filepath.Join(bin, "initdb"), "-D", dataDir, "-U", "postgres",
		"--auth=scram-sha-256", "--pwfile="+pwFile, "-E", "UTF8", "--locale=C")
	// initdb's chatter only matters when it fails.
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, lastLines(string(out), 20))
	}
	return nil
}

// superuserPassword keeps one random password per cluster directory, readable only
// by its owner, so a persistent dev cluster can be reopened.
func superuserPassword(base string, who runAs) (string, error) {
	path := filepath.Join(base, "superuser.password")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(buf)
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", err
	}
	return pw, who.own(path)
}

// pickPort is freePort; a test makes it return a port already taken.
var pickPort = freePort

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockDir takes an exclusive, non-blocking lock beside the data directory so a
// second process never starts a server on the same files.
func lockDir(base string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(base, "pmapi.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		owner, _ := os.ReadFile(filepath.Join(base, "pmapi.pid"))
		return nil, fmt.Errorf(
			"another pmapi is already using the database in %s (pid %s); stop it first",
			base,
			strings.TrimSpace(string(owner)),
		)
	}
	_ = os.WriteFile(filepath.Join(base, "pmapi.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return f, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
