package s3store_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/s3store"
)

type served struct {
	AccessKeyID, SecretAccessKey, Token, Expiration string
}

// TestEngineCredentials serves a cluster's engine its role's session credentials,
// assumed with the external id against the real STS-compatible server, only with the
// cluster's token; serves the same ones until RefreshBefore their expiry and then
// assumes the role again; serves a cluster without a role federated session
// credentials (never the service's own secret); and puts no secret in the engine's
// environment.
func TestEngineCredentials(t *testing.T) {
	c := server(t)
	f := setup(t, c)
	withRole, without := uuid.New(), uuid.New()
	var logs strings.Builder
	e, err := s3store.NewEngineCredentials(c, func(cl uuid.UUID) s3store.Role {
		if cl == withRole {
			return s3store.Role{ARN: arn(f.role), ExternalID: f.ext}
		}
		return s3store.Role{Locations: []s3store.Location{{Bucket: f.tagged, Path: "lake/a"}}}
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	env := map[string]string{}
	for _, kv := range e.EngineEnv(withRole) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] != e.URL(withRole) || env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] == "" || env["AWS_ACCESS_KEY_ID"] != "" ||
		strings.Contains(strings.Join(e.EngineEnv(withRole), " "), c.SecretAccessKey) {
		t.Fatalf("engine environment %v", env)
	}
	get := func(cl uuid.UUID, token string) (int, served) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.URL(cl), nil)
		req.Header.Set("Authorization", token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var s served
		if r.StatusCode == 200 {
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
		}
		return r.StatusCode, s
	}
	token := env["AWS_CONTAINER_AUTHORIZATION_TOKEN"]
	if code, _ := get(withRole, ""); code != 403 {
		t.Fatalf("no token: %d", code)
	}
	otherToken := strings.TrimPrefix(e.EngineEnv(without)[1], "AWS_CONTAINER_AUTHORIZATION_TOKEN=")
	if code, _ := get(withRole, otherToken); code != 403 {
		t.Fatalf("another cluster's token: %d", code)
	}
	code, first := get(withRole, token)
	exp, err := time.Parse(time.RFC3339, first.Expiration)
	if code != 200 || first.AccessKeyID == "" || first.AccessKeyID == c.AccessKeyID || first.SecretAccessKey == c.SecretAccessKey || first.Token == "" ||
		err != nil || time.Until(exp) < s3store.RefreshBefore {
		t.Fatalf("role credentials: %d %+v %v", code, first, err)
	}
	// They are the role's: STS says who they are.
	who, err := sts.NewFromConfig(aws.Config{Region: c.Region, BaseEndpoint: aws.String(c.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(first.AccessKeyID, first.SecretAccessKey, first.Token)}).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil || !strings.Contains(aws.ToString(who.Arn), f.role) {
		t.Fatalf("caller identity with the served credentials: %v %v", who, err)
	}
	if _, again := get(withRole, token); again != first {
		t.Fatalf("assumed again while %s were left", time.Until(exp).Round(time.Second))
	}
	s3store.SetNow(e, func() time.Time { return exp.Add(-s3store.RefreshBefore + time.Second) })
	if _, renewed := get(withRole, token); renewed.AccessKeyID == first.AccessKeyID || renewed.Token == first.Token {
		t.Fatalf("not renewed %s before expiry", s3store.RefreshBefore)
	}
	// Without a role the engine gets federated session credentials scoped to its
	// storage, never the service's long-lived key and secret.
	if code, own := get(without, otherToken); code != 200 || own.AccessKeyID == "" || own.AccessKeyID == c.AccessKeyID ||
		own.SecretAccessKey == c.SecretAccessKey || own.Token == "" || own.Expiration == "" {
		t.Fatalf("a cluster without a role: %d, the service's own key %v, token %v", code, own.AccessKeyID == c.AccessKeyID, own.Token != "")
	}
	if strings.Contains(logs.String(), first.SecretAccessKey) || strings.Contains(logs.String(), first.Token) {
		t.Fatalf("a secret in the log: %s", logs.String())
	}
}

// TestEngineCredentialsWhenTheRoleCannotBeAssumed: with STS unreachable the engine is
// answered 502 (its writes fail and are retried) and the log names no credential.
func TestEngineCredentialsWhenTheRoleCannotBeAssumed(t *testing.T) {
	c := s3store.Config{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", AccessKeyID: "svc-key", SecretAccessKey: "svc-secret-do-not-leak"}
	var logs strings.Builder
	cluster := uuid.New()
	e, err := s3store.NewEngineCredentials(c, func(uuid.UUID) s3store.Role {
		return s3store.Role{ARN: "arn:aws:iam::123456789012:role/unreachable", ExternalID: "ext-x"}
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req, _ := http.NewRequest("GET", e.URL(cluster), nil)
	req.Header.Set("Authorization", strings.TrimPrefix(e.EngineEnv(cluster)[1], "AWS_CONTAINER_AUTHORIZATION_TOKEN="))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusBadGateway || strings.Contains(string(b), "svc-") {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
	for _, v := range []string{c.SecretAccessKey, c.AccessKeyID, "role/unreachable", "ext-x"} {
		if strings.Contains(logs.String(), v) {
			t.Fatalf("the log names %q: %s", v, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "engine storage credentials unavailable") {
		t.Fatalf("no log line: %s", logs.String())
	}
}

// TestSessionPolicy: the federated credentials of storage without a role may touch the
// objects under each of its paths and list the bucket there, nothing else.
func TestSessionPolicy(t *testing.T) {
	var p struct {
		Statement []struct {
			Action, Resource []string
			Condition        map[string]map[string][]string
		}
	}
	if err := json.Unmarshal([]byte(s3store.SessionPolicy([]s3store.Location{{Bucket: "lake-a", Path: "/db/data/"}, {Bucket: "lake-b"}})), &p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range p.Statement {
		got = append(got, strings.Join(st.Resource, ",")+" "+strings.Join(st.Condition["StringLike"]["s3:prefix"], ","))
	}
	want := []string{"arn:aws:s3:::lake-a/db/data/* ", "arn:aws:s3:::lake-a db/data/*,db/data", "arn:aws:s3:::lake-b/* ", "arn:aws:s3:::lake-b *"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("policy resources %q, want %q", got, want)
	}
}
