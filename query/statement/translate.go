package statement

import (
	"strings"
)

// TranslateError rewrites an engine error message (or any engine text, such
// as EXPLAIN output) into the caller's names: engine databases of the
// organization become logical names, generations t__g<n> become t, the
// document column prefix doc. is dropped from paths, engine database names of
// anyone else are hidden, and the engine's echo of the rewritten query ("In
// scope SELECT ...") is removed, since it shows engine SQL rather than what
// the caller wrote.
func TranslateError(text string, env Env) string {
	text = dropScopeEcho(text)
	logical := map[string]string{}
	if env.Catalog != nil {
		for _, d := range env.Catalog.Databases() {
			logical[d.Engine] = d.Name
		}
	}
	var b strings.Builder
	b.Grow(len(text))
	i := 0
	for i < len(text) {
		c := text[i]
		if !isWordByte(c) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		word := text[i:j]
		switch {
		case word == docColumn && j < len(text) && text[j] == '.' && (i == 0 || !isWordByte(text[i-1])):
			i = j + 1 // drop "doc."
			continue
		case logical[word] != "":
			b.WriteString(logical[word])
		case isEngineDatabase(word) || word == "_svc":
			b.WriteString("<hidden>")
		default:
			b.WriteString(stripGeneration(word))
		}
		i = j
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// stripGeneration maps t__g<n> to t.
func stripGeneration(word string) string {
	k := strings.LastIndex(word, "__g")
	if k <= 0 || k+3 == len(word) {
		return word
	}
	for _, c := range word[k+3:] {
		if c < '0' || c > '9' {
			return word
		}
	}
	return word[:k]
}

// dropScopeEcho removes " In scope <query>." from engine errors, keeping the
// trailing "(CODE_NAME)".
func dropScopeEcho(text string) string {
	i := strings.Index(text, " In scope ")
	if i < 0 {
		return text
	}
	rest := text[i:]
	if j := strings.LastIndex(rest, ". ("); j >= 0 {
		return text[:i] + rest[j+1:]
	}
	return text[:i]
}
