package spl

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeBound is an earliest or latest value of a request: non-negative
// epoch seconds (a JSON number or string, fractions allowed), "now", or a
// negative relative value with a unit such as -15m, -2h, -7d, -1w, -1mon,
// -1y. Empty means the default: DefaultEarliest, DefaultLatest. An
// earliest of 0 means all time: the search reads every event before
// latest, and timelines and timecharts start at the first one.
type TimeBound string

// Defaults of the time window, as for saved searches.
const (
	DefaultEarliest TimeBound = "-24h"
	DefaultLatest   TimeBound = "now"
)

// UnmarshalJSON accepts a string or a number.
func (b *TimeBound) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = TimeBound(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("time bound must be a string or a number")
	}
	*b = TimeBound(n.String())
	return nil
}

var (
	epochRe    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	relativeRe = regexp.MustCompile(`^([+-]?)([0-9]+)([A-Za-z]+)$`)
)

// parseBound resolves one bound relative to now.
func parseBound(field string, v TimeBound, now time.Time) (time.Time, *Error) {
	s := strings.TrimSpace(string(v))
	switch {
	case strings.EqualFold(s, "now"):
		return now, nil
	case epochRe.MatchString(s):
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f > 253402300799 { // year 9999
			return time.Time{}, boundError(field, s, "epoch seconds out of range")
		}
		return time.UnixMilli(int64(math.Round(f * 1000))).UTC(), nil
	case strings.Contains(s, "@"):
		return time.Time{}, boundError(field, s, "snapping (@) is not supported")
	}
	m := relativeRe.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, boundError(field, s, "use epoch seconds, now, or a negative relative value such as -15m")
	}
	if m[1] != "-" {
		return time.Time{}, boundError(field, s, "relative values must be negative, e.g. -15m")
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || n > 1e7 {
		return time.Time{}, boundError(field, s, "relative value out of range")
	}
	if u, ok := lookupSpanUnit(m[3]); ok {
		return now.Add(-time.Duration(n*u.Seconds) * time.Second), nil
	}
	unit := strings.ToLower(m[3])
	for _, cu := range calendarUnitTable {
		if cu.Unit == unit || contains(cu.Aliases, unit) {
			if n > 12000 {
				return time.Time{}, boundError(field, s, "relative value out of range")
			}
			return now.AddDate(0, -int(n)*cu.Months, 0), nil
		}
	}
	return time.Time{}, boundError(field, s, "unknown unit; use s, m, h, d, w, mon or y")
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func boundError(field, value, why string) *Error {
	e := newError(CodeTimeWindow, "", "%s %q: %s", field, value, why)
	e.Bound = field
	return e
}

// ParseWindow resolves the request's earliest and latest against now.
func ParseWindow(earliest, latest TimeBound, now time.Time) (Window, error) {
	now = now.UTC().Truncate(time.Millisecond)
	if strings.TrimSpace(string(earliest)) == "" {
		earliest = DefaultEarliest
	}
	if strings.TrimSpace(string(latest)) == "" {
		latest = DefaultLatest
	}
	var w Window
	var errs Errors
	t, err := parseBound("earliest", earliest, now)
	if err != nil {
		errs = append(errs, err)
	}
	w.Earliest, w.HasEarliest = t, t.UnixMilli() != 0
	if t, err = parseBound("latest", latest, now); err != nil {
		errs = append(errs, err)
	}
	w.Latest = t
	if len(errs) == 0 && !w.Earliest.Before(w.Latest) {
		e := newError(CodeTimeWindow, "", "earliest (%s) must be before latest (%s)",
			w.Earliest.Format(time.RFC3339), w.Latest.Format(time.RFC3339))
		e.Bound = "earliest"
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return Window{}, errs
	}
	return w, nil
}
