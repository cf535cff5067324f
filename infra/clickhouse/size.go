package clickhouse

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// MemoryFraction returns fraction of the memory available to this process: the machine's
// physical memory, or the cgroup limit when that is lower.
func MemoryFraction(fraction float64) int64 {
	var total uint64
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		total = uint64(si.Totalram) * uint64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && (total == 0 || v < total) {
			total = v
		}
	}
	if total == 0 {
		total = 4 << 30
	}
	return int64(float64(total) * fraction)
}

// ParseSize reads a byte size: a plain number, a number with a K/M/G/T suffix (powers of
// 1024, optional "iB" or "B"), or a percentage of the available memory ("25%").
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, fmt.Errorf("size %q: want a percentage within (0, 100]", s)
		}
		return MemoryFraction(f / 100), nil
	}
	u := strings.ToUpper(s)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "B"), "I")
	mult := int64(1)
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			u = u[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: want bytes, e.g. 2GiB, 512MiB or 25%%", s)
	}
	return int64(v * float64(mult)), nil
}
