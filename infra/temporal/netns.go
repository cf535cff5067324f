package temporal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// NetnsCommand is the hidden subcommand, of a binary that calls RunNetns for it (svcd),
// that runs the embedded dev server in a network namespace of its own.
const NetnsCommand = "temporal-netns"

// SocketFile is the unix socket, in a server's 0700 data directory, through which its
// frontend is reached when it runs in a network namespace of its own.
func SocketFile(dir string) string { return filepath.Join(dir, "frontend.sock") }

// The server's ports inside the namespace, where nothing else listens: the frontend,
// its HTTP API and its metrics.
const (
	netnsPort        = 7233
	netnsHTTPPort    = 17233
	netnsMetricsPort = 17234
)

// NetnsRefusedExit is the forwarder's exit status when the namespace it was started in
// does not let it bring the loopback up (a user namespace without its capabilities).
const NetnsRefusedExit = 3

// maxSocketPath is the longest path a unix socket may have (sun_path less its NUL).
const maxSocketPath = 107

// errNoNamespace marks a start refused because this host makes no network namespace
// for this user (unprivileged user namespaces disabled, a seccomp profile).
var errNoNamespace = errors.New("cannot create a network namespace")

// isolation is the clone flags and identity mappings that put the forwarder in a network
// namespace of its own: as root, a new network namespace; otherwise a user namespace
// too, where this user is root and so may bring the namespace's loopback up.
func isolation() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// NetnsExit is the exit status of a forwarder that RunNetns ended with err.
func NetnsExit(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errNoNamespace):
		return NetnsRefusedExit
	}
	return 1
}

// namespaceRefused reports whether err is the kernel refusing the namespaces.
func namespaceRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)
}

// RunNetns is the forwarder: started in a network namespace of its own, it brings the
// namespace's loopback up, starts the dev server on it (the arguments after "--") and
// forwards each connection to the unix socket (-sock, created 0600) to the frontend's
// port. The server dies with it (its parent-death signal) and it exits with the server;
// SIGTERM is passed on to the server, which then shuts down cleanly.
func RunNetns(args []string) error {
	fs := flag.NewFlagSet(NetnsCommand, flag.ContinueOnError)
	sock := fs.String("sock", "", "unix socket to serve")
	port := fs.Int("port", netnsPort, "the frontend's port in the namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	server := fs.Args()
	if *sock == "" || len(server) == 0 {
		return errors.New("usage: " + NetnsCommand + " -sock PATH [-port N] -- TEMPORAL-BINARY ARGS...")
	}
	if err := loopbackUp(); err != nil {
		if namespaceRefused(err) {
			return fmt.Errorf("%w: %w", errNoNamespace, err)
		}
		return err
	}
	syscall.Umask(0o077)
	if err := os.Remove(*sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.Listen("unix", *sock)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := os.Chmod(*sock, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(server[0], server[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, target)
		}
	}()
	err = <-done
	_ = os.Remove(*sock)
	if err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	return nil
}

// forward copies c to and from a new connection to target, until either side closes.
func forward(c net.Conn, target string) {
	defer c.Close()
	var d net.Dialer
	up, err := d.DialContext(context.Background(), "tcp", target)
	if err != nil {
		return // not serving yet: the client retries
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go half(up, c)
	go half(c, up)
	wg.Wait()
}

// loopbackUp brings this network namespace's "lo" up (a new namespace's is down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: set up: %w", err)
	}
	return nil
}
