// Package chengine serves libchdb (ClickHouse as a library) over the part of ClickHouse's HTTP
// interface that clickhouse-go/v2 uses in HTTP mode. cmd/chengine wires it into a process;
// infra/clickhouse supervises that process.
//
// See DESIGN.md ("Embedded engine") for how requests map onto chdb connections.
package chengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
)

// Config configures a Server. Zero fields take the defaults documented on each field.
type Config struct {
	// Listen is the TCP address to serve on; port 0 picks a free port. Default 127.0.0.1:8123.
	Listen string
	// Path is the engine's data directory; one process owns it. Required.
	Path string
	// Lib is the path of libchdb.so. Required.
	Lib string
	// Pool is the number of engine connections, hence of statements running at once.
	// Default 4.
	Pool int
	// AcquireTimeout bounds how long a request waits for a free connection before it is
	// answered 503. Default 10s.
	AcquireTimeout time.Duration
	// MaxMemory is the engine's max_server_memory_usage in bytes. Default a quarter of the
	// machine's (or cgroup's) memory.
	MaxMemory int64
	// MaxThreads is every connection's max_threads (the cluster size's cores). Default: the
	// engine's (the machine's cores).
	MaxThreads int
	// MarkCache is the engine's mark_cache_size in bytes. Default 128 MiB.
	MarkCache int64
	// MaxQuerySize bounds the statement text of a request, as ClickHouse's max_query_size
	// (a request can raise it with the setting). Default 256 KiB.
	MaxQuerySize int64
	// ReadyFile, when set, receives the bound address once the server accepts requests.
	ReadyFile string
	// Password, when set, is required of every statement: as the password of HTTP basic
	// authentication (any user name; clickhouse-go sends its credentials so) or in the
	// X-ClickHouse-Key header. cmd/chengine reads it from SVC_ENGINE_PASSWORD only.
	Password string
}

// Defaults.
const (
	DefaultListen         = "127.0.0.1:8123"
	DefaultPool           = 4
	DefaultAcquireTimeout = 10 * time.Second
	DefaultMarkCache      = 128 << 20
	DefaultMaxQuerySize   = 256 << 10
)

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Pool == 0 {
		c.Pool = DefaultPool
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = DefaultAcquireTimeout
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = clickhouse.MemoryFraction(0.25)
	}
	if c.MarkCache == 0 {
		c.MarkCache = DefaultMarkCache
	}
	if c.MaxQuerySize == 0 {
		c.MaxQuerySize = DefaultMaxQuerySize
	}
	return c
}

// Validate reports the first problem with c (after defaults), naming the remedy.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("path: the engine data directory is required (--path)"))
	} else if !filepath.IsAbs(c.Path) {
		errs = append(errs, fmt.Errorf("path %q: must be absolute", c.Path))
	}
	if c.Lib == "" {
		errs = append(errs, errors.New("lib: the path of libchdb.so is required (--lib, SVC_CHDB_LIB; `go tool task deps:chdb` fetches it)"))
	} else if _, err := os.Stat(c.Lib); err != nil {
		errs = append(errs, fmt.Errorf("lib: %w (`go tool task deps:chdb` fetches it)", err))
	}
	if c.Pool < 1 || c.Pool > 256 {
		errs = append(errs, fmt.Errorf("pool %d: must be within 1..256", c.Pool))
	}
	if c.AcquireTimeout < 0 {
		errs = append(errs, fmt.Errorf("acquire timeout %s: must not be negative", c.AcquireTimeout))
	}
	if c.MaxMemory < 64<<20 {
		errs = append(errs, fmt.Errorf("max memory %d: must be at least 64 MiB", c.MaxMemory))
	}
	if c.MaxThreads < 0 || c.MaxThreads > 1024 {
		errs = append(errs, fmt.Errorf("max threads %d: must be within 0..1024", c.MaxThreads))
	}
	if c.MarkCache < 0 {
		errs = append(errs, fmt.Errorf("mark cache %d: must not be negative", c.MarkCache))
	}
	if c.MaxQuerySize < 1024 {
		errs = append(errs, fmt.Errorf("max query size %d: must be at least 1 KiB", c.MaxQuerySize))
	}
	return errors.Join(errs...)
}
