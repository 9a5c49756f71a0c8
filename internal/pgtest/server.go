package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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

	"github.com/jackc/pgx/v5"
)

// binaries are a PostgreSQL installation's server programs.
type binaries struct{ initdb, postgres string }

// findBinaries looks for initdb and postgres on PATH, then in Debian's /usr/lib/postgresql/<major>/bin
// (newest major first).
func findBinaries() (binaries, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(initdb); err == nil {
			if pg := filepath.Join(filepath.Dir(real), "postgres"); isFile(pg) {
				return binaries{real, pg}, nil
			}
		}
		if pg, err := exec.LookPath("postgres"); err == nil {
			return binaries{initdb, pg}, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return binaries{filepath.Join(d, "initdb"), filepath.Join(d, "postgres")}, nil
		}
	}
	return binaries{}, errors.New("PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin)")
}

func major(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// server is a postgres process this package started.
type server struct {
	dir    string
	dsn    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// owner is who runs the server: PostgreSQL refuses to run as root, so as root it is the postgres user.
type owner struct {
	cred *syscall.Credential
}

func serverOwner() (owner, error) {
	if os.Geteuid() != 0 {
		return owner{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return owner{}, fmt.Errorf("running as root, PostgreSQL needs the postgres user to run as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return owner{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}}, nil
}

// give hands path to the owner.
func (o owner) give(path string) error {
	if o.cred == nil {
		return nil
	}
	return os.Chown(path, int(o.cred.Uid), int(o.cred.Gid))
}

func (o owner) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.Dir = "/"
	// Setpgid: a ^C to the tests does not reach postgres first; Pdeathsig: the server does not outlive a
	// test binary that dies without running Main's cleanup (SIGQUIT is postgres' immediate shutdown).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: o.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// startServer creates a cluster in a new temporary directory and starts postgres on a free loopback
// port, with a random superuser password (scram-sha-256 over TCP), fsync off.
func startServer(bin binaries) (*server, error) {
	own, err := serverOwner()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "catalogbot-pg-")
	if err != nil {
		return nil, err
	}
	srv, err := initCluster(own, bin, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return srv, nil
}

func initCluster(own owner, bin binaries, dir string) (*server, error) {
	// The owner must reach the data directory through dir (MkdirTemp makes it 0700).
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	for _, d := range []string{data, sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
		if err := own.give(d); err != nil {
			return nil, fmt.Errorf("give %s to the postgres user: %w", d, err)
		}
	}
	var pw [16]byte
	_, _ = rand.Read(pw[:])
	password := hex.EncodeToString(pw[:])
	pwfile := filepath.Join(sock, "pwfile") // inside a directory only the owner reads
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := own.give(pwfile); err != nil {
		return nil, err
	}
	initdb := own.command(bin.initdb, "-D", data, "-U", "postgres", "--pwfile="+pwfile, "--auth-host=scram-sha-256",
		"--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	out, err := initdb.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return nil, fmt.Errorf("initdb %s: %w\n%s", data, err, out)
	}
	var last error
	for range 3 { // the free port may be taken before postgres binds it
		srv, err := launch(own, bin, dir, password)
		if err == nil {
			return srv, nil
		}
		last = err
	}
	return nil, last
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// launch starts postgres and waits until it accepts connections.
func launch(own owner, bin binaries, dir, password string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := own.command(bin.postgres, "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+filepath.Join(dir, "sock"),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	srv := &server{dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(srv.exited) }()
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", password), Host: "127.0.0.1:" + strconv.Itoa(port),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	srv.dsn = u.String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, srv.dsn)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return srv, nil
		}
		select {
		case <-srv.exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited at start (port %d):\n%s", port, tail(string(log), 20))
		default:
		}
		if time.Now().After(deadline) {
			srv.terminate()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres did not accept connections within 30s:\n%s", tail(string(log), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stop shuts postgres down and removes its directory.
func (s *server) stop() {
	s.terminate()
	os.RemoveAll(s.dir)
}

// terminate asks postgres for a fast shutdown (it ends its sessions), killing its process group after 10s.
func (s *server) terminate() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}
