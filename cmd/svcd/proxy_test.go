package main

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy forwards connections made to it to a service: it stands between svcd (and its
// engine) and the S3-compatible server, or lets a node in a network namespace of its
// own reach a service on the test's loopback over a link the test made. While up it
// forwards connections, while down it accepts them and never answers, as an
// unreachable endpoint behind a firewall that drops packets does.
type proxy struct {
	ln    net.Listener
	up    atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
}

// newProxy listens on a free port of host.
func newProxy(t *testing.T, host, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.up.Store(true)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.hold(c)
			if !p.up.Load() {
				continue // held open, never answered
			}
			go func() {
				u, err := net.Dial("tcp", target)
				if err != nil {
					_ = c.Close()
					return
				}
				p.hold(u)
				go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
				_, _ = io.Copy(c, u)
				_ = c.Close()
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p
}

func (p *proxy) hold(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

// cut closes every connection made so far.
func (p *proxy) cut() {
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
}

func (p *proxy) set(up bool) { p.up.Store(up); p.cut() }
