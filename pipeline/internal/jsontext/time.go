package jsontext

import "time"

// TimeLayout is how every emitted timestamp is written: RFC 3339 in UTC with exactly nine
// fractional digits, so that timestamps sort as text and ClickHouse reads them as
// DateTime64(9).
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// AppendTime appends the instant sec seconds and nsec nanoseconds after the Unix epoch as a
// quoted TimeLayout string.
func AppendTime(dst []byte, sec int64, nsec int64) []byte {
	sec += nsec / 1e9
	nsec %= 1e9
	if nsec < 0 {
		nsec += 1e9
		sec--
	}
	days := sec / 86400
	rem := sec % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	y, m, d := civil(days)
	if y < 0 || y > 9999 {
		dst = append(dst, '"')
		dst = time.Unix(sec, nsec).UTC().AppendFormat(dst, TimeLayout)
		return append(dst, '"')
	}
	var b [32]byte
	b[0] = '"'
	put4(b[1:], int(y))
	b[5] = '-'
	put2(b[6:], int(m))
	b[8] = '-'
	put2(b[9:], int(d))
	b[11] = 'T'
	put2(b[12:], int(rem/3600))
	b[14] = ':'
	put2(b[15:], int(rem/60%60))
	b[17] = ':'
	put2(b[18:], int(rem%60))
	b[20] = '.'
	n := int(nsec)
	for i := 29; i >= 21; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	b[30] = 'Z'
	b[31] = '"'
	return append(dst, b[:]...)
}

// AppendUnixNano appends a timestamp given in nanoseconds since the Unix epoch, as OTLP sends
// them; values past 2262 (above the int64 range) are still written correctly.
func AppendUnixNano(dst []byte, ns uint64) []byte {
	return AppendTime(dst, int64(ns/1e9), int64(ns%1e9))
}

// AppendUnixMilli appends a timestamp given in milliseconds since the Unix epoch.
func AppendUnixMilli(dst []byte, ms int64) []byte {
	return AppendTime(dst, ms/1000, ms%1000*1e6)
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
// days_from_civil, inverted).
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func put2(b []byte, v int) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

func put4(b []byte, v int) {
	put2(b, v/100)
	put2(b[2:], v%100)
}
