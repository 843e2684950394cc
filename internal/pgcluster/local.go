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
	"time"
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
	who, err := serverIdentity()
	if err != nil {
		return nil, err
	}
	ephemeral := opts.DataDir == ""
	base := opts.DataDir
	if ephemeral {
		if base, err = os.MkdirTemp("", "pmapi-pg-"); err != nil {
			return nil, err
		}
	} else if base, err = filepath.Abs(base); err != nil {
		return nil, err
	}
	// Parents must be traversable by the server's user; the directory itself is
	// private to it.
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, err
	}
	if err := who.own(base); err != nil {
		return nil, err
	}
	cleanup := func() {
		if ephemeral {
			os.RemoveAll(base)
		}
	}
	lock, err := lockDir(base)
	if err != nil {
		cleanup()
		return nil, err
	}
	release := func() {
		lock.Close()
		cleanup()
	}

	dataDir := filepath.Join(base, "data")
	password, err := superuserPassword(base, who)
	if err != nil {
		release()
		return nil, err
	}
	if !fileExists(filepath.Join(dataDir, "PG_VERSION")) {
		if err := initCluster(ctx, bin, who, base, dataDir); err != nil {
			release()
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		release()
		return nil, err
	}
	settings := []string{
		"-p " + strconv.Itoa(port),
		"-c listen_addresses=127.0.0.1",
		"-c unix_socket_directories=",
		"-c max_connections=400",
		"-c shared_buffers=128MB",
	}
	if !opts.Durable {
		settings = append(settings, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off")
	}
	logFile := filepath.Join(base, "server.log")
	start := who.command(ctx, filepath.Join(bin, "pg_ctl"), "-D", dataDir, "-w", "-t", "120",
		"-l", logFile, "-o", strings.Join(settings, " "), "start")
	if out, err := start.CombinedOutput(); err != nil {
		tail, _ := os.ReadFile(logFile)
		release()
		return nil, fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, lastLines(string(tail), 20))
	}
	fmt.Fprintf(opts.Log, "postgres: private cluster in %s on 127.0.0.1:%d\n", dataDir, port)
	admin := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	stop := func(ctx context.Context) error {
		defer release()
		cmd := who.command(context.WithoutCancel(ctx), filepath.Join(bin, "pg_ctl"), "-D", dataDir, "-m", "fast", "-w", "stop")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
		}
		return nil
	}
	return &Server{AdminURL: admin.String(), Source: "binaries", stop: stop}, nil
}

func initCluster(ctx context.Context, bin string, who runAs, base, dataDir string) error {
	pwFile := filepath.Join(base, "superuser.password")
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
		return nil, fmt.Errorf("another pmapi is already using the database in %s (pid %s); stop it first", base, strings.TrimSpace(string(owner)))
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

// waitReady polls until the server accepts connections or the deadline passes.
func waitReady(ctx context.Context, try func(context.Context) error, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		if last = try(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
