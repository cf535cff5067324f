// Package localproc holds what the local engine runners (the Kafka broker, the Temporal
// dev server) share: a process recorded in a PID file, checked against its command line
// because PIDs get reused, and free loopback ports.
package localproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Alive reports whether pid is a live process whose command line contains marker.
func Alive(pid int, marker string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// A zombie (state Z) has exited; only its parent has not reaped it.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return strings.Contains(string(cmdline), marker)
}

// ReadPID returns the process id recorded in file, 0 when there is none.
func ReadPID(file string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// WritePID records pid in file.
func WritePID(file string, pid int) error {
	return os.WriteFile(file, []byte(strconv.Itoa(pid)), 0o600)
}

// StopPIDFile stops the process recorded in file if it still runs and its command line
// contains marker: SIGTERM, then SIGKILL after 30 s or when ctx ends. The file is removed.
func StopPIDFile(ctx context.Context, file, marker string) error {
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pid := ReadPID(file)
	if pid == 0 || !Alive(pid, marker) {
		return os.Remove(file)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for Alive(pid, marker) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return os.Remove(file)
}

// FreePort returns a TCP port free on host at the time of the call.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a local engine process started by Start.
type Process struct {
	cmd     *exec.Cmd
	pidFile string
	done    chan struct{}
}

// Start starts cmd in a session of its own and records its PID in pidFile. Unless
// detach, the process is killed when this one dies, since nothing else would stop it;
// a detached one (a test harness's) is stopped later with StopPIDFile. Attributes
// already in cmd.SysProcAttr (namespaces to clone) are kept.
func Start(cmd *exec.Cmd, pidFile string, detach bool) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if !detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, pidFile: pidFile, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := WritePID(pidFile, cmd.Process.Pid); err != nil {
		return nil, errors.Join(fmt.Errorf("write pid file: %w", err), p.Stop(context.Background()))
	}
	return p, nil
}

// PID is the process id; 0 for a nil Process.
func (p *Process) PID() int {
	if p == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// ExitCode is the process's exit status once it exited; -1 before, or when a signal
// ended it, or for a nil Process.
func (p *Process) ExitCode() int {
	if p == nil {
		return -1
	}
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Done is closed once the process exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM and waits; SIGKILL when ctx ends or after 30 s. The PID file is
// removed. Safe on nil, and twice.
func (p *Process) Stop(ctx context.Context) error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		_ = os.Remove(p.pidFile)
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_ = os.Remove(p.pidFile)
	return nil
}
