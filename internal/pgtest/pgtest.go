// Package pgtest starts a throwaway PostgreSQL server for tests: the
// real server from the machine's packages (Debian's postgresql), never a
// mock. [Start] runs initdb into a fresh temporary directory, starts
// postgres on a unix socket in that directory only (no TCP port), and
// stops it and removes the directory when the test ends.
//
// PostgreSQL refuses to run as root; when the test runs as root (as CI
// does), initdb and postgres run as the unprivileged user "postgres"
// (the process's credentials are set as runuser would set them, so that
// signals reach postgres itself), and the directory belongs to that user.
//
// When the server binaries are missing the test is skipped as the
// optional suite "postgresql" (see internal/optional); with
// ACPMUX_REQUIRE_POSTGRES set (as .ci/run sets it) that is a failure.
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpmux/acpmux/internal/optional"
)

// Server is a running throwaway PostgreSQL server.
type Server struct {
	// URL connects to the "postgres" database as the superuser over the
	// unix socket, in the form pgx and libpq accept:
	// postgres:///postgres?host=DIR&port=5432&user=USER.
	URL string
	// Dir holds the data directory and the socket.
	Dir  string
	bin  string
	user string              // the server's user, or "" for ourselves
	cred *syscall.Credential // set when running as root
	cmd  *exec.Cmd
	log  string     // the server's log file
	mu   sync.Mutex // guards n
	n    int        // databases created by Database
}

// binDir returns the directory of initdb and postgres: $ACPMUX_PG_BINDIR,
// the newest /usr/lib/postgresql/N/bin, or the directory of initdb on
// PATH.
func binDir() string {
	if d := os.Getenv("ACPMUX_PG_BINDIR"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start starts a server for t, or skips t when PostgreSQL is not
// installed. The server stops when t and its subtests end.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binDir()
	if bin == "" {
		if os.Getenv("ACPMUX_REQUIRE_POSTGRES") != "" {
			t.Fatal("PostgreSQL is required (ACPMUX_REQUIRE_POSTGRES is set) but initdb and postgres were not found (install Debian's postgresql)")
		}
		optional.Skip(t, "postgresql", "initdb and postgres not found: install Debian's postgresql to run the PostgreSQL store tests")
	}
	s := &Server{bin: bin}
	dir, err := os.MkdirTemp("", "acpmux-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	dbUser := "postgres"
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs an unprivileged user: %v (Debian's postgresql package creates the user postgres)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.user = "postgres"
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	} else if u, err := user.Current(); err == nil {
		dbUser = u.Username
	}
	data := filepath.Join(dir, "data")
	if out, err := s.command("initdb", "-D", data, "-U", dbUser, "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.cmd = s.command("postgres", "-D", data, "-k", dir, "-c", "listen_addresses=", "-p", "5432",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	s.log = filepath.Join(dir, "server.log")
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(s.stop)
	sock := filepath.Join(dir, ".s.PGSQL.5432")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil && s.ready() {
			break
		}
		if time.Now().After(deadline) || s.cmd.ProcessState != nil {
			b, _ := os.ReadFile(s.log)
			t.Fatalf("postgres did not start within 30s:\n%s", b)
		}
	}
	s.URL = fmt.Sprintf("postgres:///postgres?host=%s&port=5432&user=%s&sslmode=disable", dir, dbUser)
	return s
}

// ready reports whether the server accepts connections (pg_isready).
func (s *Server) ready() bool {
	return s.command("pg_isready", "-q", "-h", s.Dir, "-p", "5432").Run() == nil
}

// command runs the server binary name as the server's user, in s.Dir.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(s.bin, name), args...)
	c.Dir = s.Dir
	if s.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		c.Env = append(os.Environ(), "HOME="+s.Dir, "USER="+s.user)
	}
	return c
}

// Log returns what the server has written to its log so far (its
// WARNINGs and errors among it).
func (s *Server) Log(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Database creates a new, empty database on s and returns its URL, so
// that tests sharing one server do not see each other's tables.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t%d", s.n)
	s.mu.Unlock()
	if out, err := s.command("createdb", "-h", s.Dir, "-p", "5432", "-U", s.dbUser(), name).CombinedOutput(); err != nil {
		t.Fatalf("createdb %s: %v\n%s", name, err, out)
	}
	return fmt.Sprintf("postgres:///%s?host=%s&port=5432&user=%s&sslmode=disable", name, s.Dir, s.dbUser())
}

func (s *Server) dbUser() string {
	if s.user != "" {
		return s.user
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "postgres"
}

// stop shuts the server down (fast shutdown) and waits for it.
func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// CPU returns the processor time the server has used so far: user and
// system time of the postmaster, of its children that have exited (and
// been reaped), and of its live children (the backends and background
// workers), read from /proc. A child that is reaped while its live
// siblings are read would be counted twice or not at all, so the reading
// is taken again, up to 100 times, until the reaped children's time did
// not change around it; with children exiting faster than that (not a
// benchmark's pool of connections) the last try is returned as it is. It
// is for benchmarks that report the server's cost per operation: take the
// difference of two readings. It returns 0 and false where /proc cannot
// be read (not Linux).
func (s *Server) CPU() (time.Duration, bool) {
	pid := s.cmd.Process.Pid
	var total int64
	for range 100 {
		before, ok := procTicks(pid)
		if !ok {
			return 0, false
		}
		live := childTicks(pid)
		after, ok := procTicks(pid)
		if !ok {
			return 0, false
		}
		total = after.own + after.reaped + live
		if after.reaped == before.reaped {
			break
		}
	}
	return time.Duration(total) * time.Second / clockTicks, true
}

// childTicks returns the user and system time, in clock ticks, of the
// live children of pid.
func childTicks(pid int) int64 {
	var ticks int64
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		f, ok := statFields(b)
		if !ok || f[1] != strconv.Itoa(pid) { // f[1]: ppid
			continue
		}
		if t, ok := fieldTicks(f); ok {
			ticks += t.own
		}
	}
	return ticks
}

// clockTicks is the unit of /proc/PID/stat's times (sysconf(_SC_CLK_TCK),
// 100 on every Linux port Go runs on).
const clockTicks = 100

// procTicks returns pid's times from /proc/PID/stat.
func procTicks(pid int) (ticks, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ticks{}, false
	}
	f, ok := statFields(b)
	if !ok {
		return ticks{}, false
	}
	return fieldTicks(f)
}

// statFields returns the fields of a /proc/PID/stat line after the
// command name (which may hold spaces): f[0] is the state, f[1] the ppid,
// f[11] and f[12] utime and stime, f[13] and f[14] cutime and cstime.
func statFields(b []byte) ([]string, bool) {
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(b[i+1:]))
	return f, len(f) > 14
}

// ticks are a process's times in clock ticks: its own user and system
// time, and that of its children it has reaped.
type ticks struct{ own, reaped int64 }

// fieldTicks reads the times of statFields' f.
func fieldTicks(f []string) (ticks, bool) {
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(f[11+i], 10, 64)
		if err != nil {
			return ticks{}, false
		}
		n[i] = v
	}
	return ticks{own: n[0] + n[1], reaped: n[2] + n[3]}, true
}
