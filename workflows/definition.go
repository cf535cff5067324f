package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/http/httpguts"

	"github.com/svc-data/svc/projections/catalog"
)

// Limits of a definition.
const (
	MaxDescription = 1000
	MaxInterval    = 86_400
	maxName        = 256
	maxSinks       = 32
	maxSQL         = 1 << 20
)

// body is a create or PATCH request. Raw fields tell "omitted" from "null".
type body struct {
	Name            *string
	Description     json.RawMessage
	Query           *queryBody
	IntervalSeconds json.RawMessage
	Enabled         *bool
	Sinks           *[]sinkBody
}

type queryBody struct {
	Database *string
	SQL      *string
}

type sinkBody struct {
	ID       *uuid.UUID
	Type     string
	Settings map[string]json.RawMessage
}

// fields decodes a JSON object into its members, naming the field for errors.
func fields(raw []byte, field string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalid(field, "%s must be a JSON object", field)
	}
	return m, nil
}

func str(raw json.RawMessage, field string) (*string, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return nil, invalid(field, "%s must be a string", field)
	}
	return s, nil
}

// parseBody decodes a create or PATCH body. Top-level `database` and `sql`, and sink
// fields outside `settings`, are refused rather than guessed at.
func parseBody(raw []byte, create bool) (body, error) {
	var b body
	if len(bytes.TrimSpace(raw)) == 0 {
		return b, invalid("body", "the request body is empty; send a JSON object")
	}
	top, err := fields(raw, "body")
	if err != nil {
		return b, err
	}
	for _, f := range []string{"database", "sql"} {
		if _, ok := top[f]; ok {
			return b, invalid(f, "top-level %q is not a workflow field; send it inside query: {\"query\": {\"database\": ..., \"sql\": ...}}", f)
		}
	}
	if v, ok := top["name"]; ok {
		if b.Name, err = str(v, "name"); err != nil {
			return b, err
		}
	}
	if v, ok := top["description"]; ok {
		b.Description = v
	}
	if v, ok := top["query"]; ok {
		q, err := fields(v, "query")
		if err != nil {
			return b, err
		}
		b.Query = &queryBody{}
		for k, v := range q {
			switch k {
			case "database":
				if b.Query.Database, err = str(v, "query.database"); err != nil {
					return b, err
				}
			case "sql":
				if b.Query.SQL, err = str(v, "query.sql"); err != nil {
					return b, err
				}
			}
		}
	}
	if v, ok := top["interval_seconds"]; ok {
		b.IntervalSeconds = v
	}
	if v, ok := top["enabled"]; ok {
		var e *bool
		if err := json.Unmarshal(v, &e); err != nil || e == nil {
			return b, invalid("enabled", "enabled must be true or false")
		}
		b.Enabled = e
	}
	if v, ok := top["sinks"]; ok {
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil || list == nil {
			return b, invalid("sinks", "sinks must be an array of sinks")
		}
		sinks := make([]sinkBody, 0, len(list))
		for i, one := range list {
			field := fmt.Sprintf("sinks[%d]", i)
			m, err := fields(one, field)
			if err != nil {
				return b, err
			}
			var sb sinkBody
			// Sorted, so that a body with two wrong fields is always answered naming the same one.
			for _, k := range slices.Sorted(maps.Keys(m)) {
				v := m[k]
				switch k {
				case "id":
					var id uuid.UUID
					if err := json.Unmarshal(v, &id); err != nil {
						return b, invalid(field+".id", "%s.id must be the id of one of the workflow's sinks", field)
					}
					sb.ID = &id
				case "type":
					t, err := str(v, field+".type")
					if err != nil {
						return b, err
					}
					sb.Type = *t
				case "settings":
					if sb.Settings, err = fields(v, field+".settings"); err != nil {
						return b, err
					}
				default:
					return b, invalid(field+"."+k, "%s.%s is not a sink field; sink settings go inside settings, e.g. {\"type\": \"http\", \"settings\": {\"url\": ...}}", field, k)
				}
			}
			sinks = append(sinks, sb)
		}
		b.Sinks = &sinks
	}
	if create {
		if b.Name == nil {
			return b, invalid("name", "name is required")
		}
		if b.Query == nil {
			return b, invalid("query", "query is required: {\"database\": ..., \"sql\": ...}")
		}
		if b.Query.Database == nil {
			return b, invalid("query.database", "query.database is required")
		}
		if b.Query.SQL == nil {
			return b, invalid("query.sql", "query.sql is required")
		}
	}
	return b, nil
}

// apply validates b and copies it onto w (rule 2: omitted fields keep their values).
func (s *Service) apply(ctx context.Context, b body, w *catalog.Workflow) error {
	if b.Name != nil {
		w.Name = strings.ToLower(strings.TrimSpace(*b.Name))
		if w.Name == "" || len(w.Name) > maxName {
			return invalid("name", "name must be 1 to %d characters after trimming", maxName)
		}
	}
	if b.Description != nil {
		var d *string
		if err := json.Unmarshal(b.Description, &d); err != nil {
			return invalid("description", "description must be a string or null")
		}
		w.Description = nil
		if d != nil {
			t := strings.TrimSpace(*d)
			if n := len([]rune(t)); n > MaxDescription {
				return invalid("description", "description must be at most %d characters, not %d", MaxDescription, n)
			}
			if t != "" {
				w.Description = &t
			}
		}
	}
	if b.Query != nil {
		if b.Query.Database != nil {
			w.Database = strings.TrimSpace(*b.Query.Database)
		}
		if b.Query.SQL != nil {
			w.SQL = *b.Query.SQL
		}
		// Only an edit of the query checks its database: a workflow whose database was
		// deleted can still be paused, renamed or given other sinks (its runs fail
		// until the query is pointed at a database that exists).
		if w.Database == "" {
			return invalid("query.database", "query.database must name a database")
		}
		if _, ok := s.model.Database(w.ClusterID, w.Database); !ok {
			return invalid("query.database", "database %q does not exist in this cluster", w.Database)
		}
	}
	if strings.TrimSpace(w.SQL) == "" || len(w.SQL) > maxSQL {
		return invalid("query.sql", "query.sql must be a statement of 1 byte to 1 MiB")
	}
	if b.IntervalSeconds != nil {
		if string(b.IntervalSeconds) == "null" {
			w.IntervalSeconds = nil
		} else {
			var f float64
			if err := json.Unmarshal(b.IntervalSeconds, &f); err != nil || f != float64(int(f)) || f < 1 || f > MaxInterval {
				return invalid("interval_seconds", "interval_seconds must be whole seconds from 1 to %d, or null for manual-only", MaxInterval)
			}
			n := int(f)
			w.IntervalSeconds = &n
		}
	}
	if b.Enabled != nil {
		w.Enabled = *b.Enabled
	}
	if b.Sinks != nil {
		sinks, err := s.sinks(ctx, *b.Sinks, w)
		if err != nil {
			return err
		}
		w.Sinks = sinks
	}
	return nil
}

// sinks validates a full replacement list: sinks with an id keep it (and keep their
// sealed URL and headers when settings omit them); sinks without one are new.
func (s *Service) sinks(ctx context.Context, in []sinkBody, w *catalog.Workflow) ([]catalog.WorkflowSink, error) {
	if len(in) > maxSinks {
		return nil, invalid("sinks", "a workflow has at most %d sinks", maxSinks)
	}
	old := map[uuid.UUID]catalog.WorkflowSink{}
	for _, k := range w.Sinks {
		old[k.ID] = k
	}
	out := make([]catalog.WorkflowSink, 0, len(in))
	seen := map[uuid.UUID]bool{}
	for i, sb := range in {
		field := fmt.Sprintf("sinks[%d]", i)
		var k catalog.WorkflowSink
		if sb.ID != nil {
			prev, ok := old[*sb.ID]
			if !ok || seen[*sb.ID] {
				return nil, invalid(field+".id", "%s.id %s is not a sink of this workflow; omit id for a new sink", field, sb.ID)
			}
			seen[*sb.ID] = true
			k = prev
			if sb.Type == "" {
				sb.Type = prev.Type
			}
			if sb.Type != prev.Type {
				return nil, invalid(field+".type", "%s.type cannot change; remove the sink and add a new one", field)
			}
		} else {
			k.ID = uuid.New()
		}
		k.Type = sb.Type
		set := sb.Settings
		switch sb.Type {
		case catalog.SinkHTTP:
			for _, name := range slices.Sorted(maps.Keys(set)) {
				if name != "url" && name != "headers" {
					return nil, invalid(field+".settings."+name, "HTTP sink settings are url and headers, not %q", name)
				}
			}
			if v, ok := set["url"]; ok {
				u, err := str(v, field+".settings.url")
				if err != nil {
					return nil, err
				}
				if _, err := s.cfg.Egress.Check(ctx, *u); err != nil {
					return nil, invalid(field+".settings.url", "%s.settings.url: %v; an operator can allow more with SVC_URL_IMPORT_ALLOW", field, err)
				}
				k.SealedURL = s.sealer.Seal(*u, k.ID.String()+"/url")
			} else if k.SealedURL == "" {
				return nil, invalid(field+".settings.url", "%s.settings.url is required for an HTTP sink", field)
			}
			if v, ok := set["headers"]; ok {
				var h map[string]string
				if err := json.Unmarshal(v, &h); err != nil {
					return nil, invalid(field+".settings.headers", "%s.settings.headers must be an object of header names to string values", field)
				}
				names := make([]string, 0, len(h))
				for n, val := range h {
					if !httpguts.ValidHeaderFieldName(n) || !httpguts.ValidHeaderFieldValue(val) {
						// Neither is quoted: a "name" may hold a whole "Authorization: Bearer ..." line.
						return nil, invalid(field+".settings.headers", "%s.settings.headers: a header name or value is not valid (names are tokens, values have no line breaks)", field)
					}
					if reservedHeader(n) {
						return nil, invalid(field+".settings.headers", "%s.settings.headers: %s is set by the service", field, http.CanonicalHeaderKey(n))
					}
					names = append(names, http.CanonicalHeaderKey(n))
				}
				sort.Strings(names)
				raw, _ := json.Marshal(h)
				k.SealedHeaders, k.HeaderNames = s.sealer.Seal(string(raw), k.ID.String()+"/headers"), names
			}
			k.Database, k.Table = "", ""
		case catalog.SinkTable:
			for _, name := range slices.Sorted(maps.Keys(set)) {
				if name != "database" && name != "table" {
					return nil, invalid(field+".settings."+name, "table sink settings are database and table, not %q", name)
				}
			}
			for _, f := range []string{"database", "table"} {
				v, ok := set[f]
				if !ok {
					return nil, invalid(field+".settings."+f, "%s.settings.%s is required for a table sink", field, f)
				}
				x, err := str(v, field+".settings."+f)
				if err != nil {
					return nil, err
				}
				if strings.TrimSpace(*x) == "" {
					return nil, invalid(field+".settings."+f, "%s.settings.%s must not be empty", field, f)
				}
				if f == "database" {
					k.Database = *x
				} else {
					k.Table = *x
				}
			}
			k.SealedURL, k.SealedHeaders, k.HeaderNames = "", "", nil
		case "":
			return nil, invalid(field+".type", "%s.type is required: http or table", field)
		default:
			return nil, invalid(field+".type", "%s.type %q is not a sink type: http or table", field, sb.Type)
		}
		out = append(out, k)
	}
	return out, nil
}

// reservedHeader: headers the delivery sets itself.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", "Content-Length", "Idempotency-Key", "Host", "Transfer-Encoding", "Connection":
		return true
	}
	return false
}

// View is a workflow as the API returns it.
type View struct {
	ID              uuid.UUID  `json:"id"`
	Name            string     `json:"name"`
	Description     *string    `json:"description"`
	Query           QueryView  `json:"query"`
	IntervalSeconds *int       `json:"interval_seconds"`
	Enabled         bool       `json:"enabled"`
	Sinks           []SinkView `json:"sinks"`
	Revision        int        `json:"revision"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	NextRunAt       *time.Time `json:"next_run_at"`
}

// QueryView is the saved query.
type QueryView struct {
	Database string `json:"database"`
	SQL      string `json:"sql"`
}

// SinkView is a sink without its secrets: an HTTP sink shows its URL (null when it
// cannot be decrypted), whether one is configured, and its header names only.
type SinkView struct {
	ID       uuid.UUID      `json:"id"`
	Type     string         `json:"type"`
	Settings map[string]any `json:"settings"`
}

// View renders w.
func (s *Service) View(w *catalog.Workflow) View {
	v := View{ID: w.ID, Name: w.Name, Description: w.Description, Query: QueryView{Database: w.Database, SQL: w.SQL},
		IntervalSeconds: w.IntervalSeconds, Enabled: w.Enabled, Sinks: []SinkView{}, Revision: w.Revision,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, NextRunAt: s.nextRunAt(w, time.Now())}
	for _, k := range w.Sinks {
		sv := SinkView{ID: k.ID, Type: k.Type}
		switch k.Type {
		case catalog.SinkHTTP:
			var url *string
			if u, err := s.sealer.Open(k.SealedURL, k.ID.String()+"/url"); err == nil {
				url = &u
			}
			names := k.HeaderNames
			if names == nil {
				names = []string{}
			}
			sv.Settings = map[string]any{"url": url, "url_configured": k.SealedURL != "", "header_names": names}
		case catalog.SinkTable:
			sv.Settings = map[string]any{"database": k.Database, "table": k.Table}
		}
		v.Sinks = append(v.Sinks, sv)
	}
	return v
}
