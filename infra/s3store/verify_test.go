package s3store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/infra/testenv"
)

// Server returns the configuration of the S3/STS/IAM-compatible test server
// (SVC_S3_ENDPOINT; `go tool task test` starts one), skipping when it is unset.
func server(t *testing.T) s3store.Config {
	t.Helper()
	ep := testenv.S3(t)
	return s3store.Config{Endpoint: ep, Region: "us-east-1", AccessKeyID: "svc-test-key", SecretAccessKey: "svc-test-secret-do-not-leak", TagDomain: "svc-data.dev"}
}

// fixture makes a tagged bucket, an untagged one, one with another tag value, and a role
// whose trust policy requires external id ext and which carries the tag.
type fixture struct {
	tagged, untagged, other, role, roleUntagged, ext, tag string
}

func setup(t *testing.T, c s3store.Config) fixture {
	ctx := context.Background()
	id := strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	f := fixture{tagged: "tagged-" + id, untagged: "untagged-" + id, other: "other-" + id,
		role: "svc-role-" + id, roleUntagged: "svc-role-untagged-" + id, ext: "ext-" + id, tag: "cluster-" + id}
	cl := c.S3Client()
	for b, tag := range map[string]string{f.tagged: f.tag, f.untagged: "", f.other: "someone-else"} {
		if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
		if tag != "" {
			if _, err := cl.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b),
				Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(c.TagKey()), Value: aws.String(tag)}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ic := iam.NewFromConfig(aws.Config{Region: c.Region, BaseEndpoint: aws.String(c.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")})
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"sts:ExternalId":%q}}}]}`, f.ext)
	for name, tagged := range map[string]bool{f.role: true, f.roleUntagged: false} {
		in := &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(policy)}
		if tagged {
			in.Tags = []iamtypes.Tag{{Key: aws.String(c.TagKey()), Value: aws.String(f.tag)}}
		}
		if _, err := ic.CreateRole(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func arn(role string) string { return "arn:aws:iam::123456789012:role/" + role }

// TestVerify answers verified for a good setup and names the failing check for each
// reason, against the real S3/STS/IAM-compatible server; no answer holds the secret.
func TestVerify(t *testing.T) {
	c := server(t)
	f := setup(t, c)
	ctx := context.Background()
	good := s3store.Request{Data: s3store.Location{Bucket: f.tagged, Path: "data/x"}, Backups: s3store.Location{Bucket: f.tagged, Path: "backups"},
		RoleARN: arn(f.role), ExternalID: f.ext, BucketTag: f.tag}
	with := func(change func(r *s3store.Request)) s3store.Request {
		r := good
		change(&r)
		return r
	}
	cases := []struct {
		name      string
		cfg       s3store.Config
		req       s3store.Request
		failCheck string // "" = verified
		mention   string
	}{
		{"good with role", c, good, "", ""},
		{"good without role", c, with(func(r *s3store.Request) { r.RoleARN, r.ExternalID = "", "" }), "", ""},
		{"any tag value when none asked", c, with(func(r *s3store.Request) { r.BucketTag, r.Data.Bucket = "", f.other }), "", ""},
		{"no service credentials", s3store.Config{Endpoint: c.Endpoint, Region: c.Region, TagDomain: c.TagDomain}, good, "credentials", "SVC_S3_ACCESS_KEY_ID"},
		{"role missing", c, with(func(r *s3store.Request) { r.RoleARN = arn("no-such-role-" + f.tag) }), "role", "NoSuchEntity"},
		{"external id differs", c, with(func(r *s3store.Request) { r.ExternalID = "wrong" }), "role", "different external id"},
		{"role untagged", c, with(func(r *s3store.Request) { r.RoleARN = arn(f.roleUntagged) }), "role", "the role has no tag svc-data.dev/cluster"},
		{"data bucket missing", c, with(func(r *s3store.Request) { r.Data.Bucket = "missing-" + f.tag }), "data_bucket", "missing-" + f.tag},
		{"backups bucket missing", c, with(func(r *s3store.Request) { r.Backups.Bucket = "missing-" + f.tag }), "backups_bucket", "not reachable"},
		{"data bucket untagged", c, with(func(r *s3store.Request) { r.Data.Bucket = f.untagged }), "data_bucket_tag", "has no tag"},
		{"data bucket tagged for another cluster", c, with(func(r *s3store.Request) { r.Data.Bucket = f.other }), "data_bucket_tag", `"someone-else"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.cfg.Verify(ctx, tc.req)
			t.Logf("%+v", res)
			if strings.Contains(fmt.Sprint(res), c.SecretAccessKey) || strings.Contains(fmt.Sprint(res), "role/") || strings.Contains(fmt.Sprint(res), f.ext) {
				t.Fatal("the answer holds the service's secret, the role or the external id")
			}
			if tc.failCheck == "" {
				if !res.Verified {
					t.Fatalf("not verified: %s", res.Message)
				}
				return
			}
			last := res.Checks[len(res.Checks)-1]
			if res.Verified || last.OK || last.Name != tc.failCheck || !strings.HasPrefix(res.Message, tc.failCheck+": ") || !strings.Contains(res.Message, tc.mention) {
				t.Fatalf("want failed check %s mentioning %q, got %+v", tc.failCheck, tc.mention, res)
			}
		})
	}
	// The probes were deleted: nothing is left under the paths.
	for _, p := range []string{"data/x/", "backups/"} {
		keys, err := c.ListObjects(ctx, f.tagged, p)
		if err != nil || len(keys) != 0 {
			t.Fatalf("objects left under %s: %v %v", p, keys, err)
		}
	}
}
