package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// Location is a bucket and a path inside it.
type Location struct{ Bucket, Path string }

// Request is what Verify checks: the data and backups locations, the role the service
// assumes (optional) with its external id, and the value the `<domain>/cluster` tag must
// have on the buckets and the role (empty: the tag must be present, any value).
type Request struct {
	Data, Backups       Location
	RoleARN, ExternalID string
	BucketTag           string
}

// Check is the outcome of one verification step.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Result is the outcome of Verify: Verified when every check passed; Message names the
// first failure.
type Result struct {
	Verified bool    `json:"verified"`
	Message  string  `json:"message"`
	Checks   []Check `json:"checks"`
}

// Verify checks, in order, stopping at the first failure: the service has credentials;
// it can assume the role with the external id (when a role is given); the role's trust
// policy names that external id and the role carries the cluster tag; then, for the data
// and the backups location, the bucket is reachable, carries the cluster tag, and a probe
// object can be written, read back identical and deleted. Messages carry names and the
// storage's error codes, never a credential.
func (c Config) Verify(ctx context.Context, r Request) Result {
	var res Result
	pass := func(name, msg string) { res.Checks = append(res.Checks, Check{name, true, msg}) }
	fail := func(name, msg string) Result {
		res.Checks = append(res.Checks, Check{name, false, msg})
		res.Message = name + ": " + msg
		return res
	}
	if !c.Configured() {
		return fail("credentials", "the service has no storage credentials configured (SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY, or SVC_S3_CREDENTIALS_FILE)")
	}
	creds := c.static()
	if r.RoleARN != "" {
		stsc := sts.NewFromConfig(c.awsConfig(creds))
		out, err := stsc.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(r.RoleARN),
			RoleSessionName: aws.String("svc-verify-s3-access"), ExternalId: nonEmpty(r.ExternalID), DurationSeconds: aws.Int32(900)})
		if err != nil {
			return fail("assume_role", "could not assume the role with the external id: "+codeOnly(err))
		}
		cr := out.Credentials
		creds = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken)))
		pass("assume_role", "assumed the role")
		if msg, ok := c.checkRole(ctx, creds, r); !ok {
			return fail("role", msg)
		} else {
			pass("role", msg)
		}
	}
	client := c.s3Client(creds)
	seen := map[Location]bool{}
	for _, loc := range []struct {
		what string
		l    Location
	}{{"data", r.Data}, {"backups", r.Backups}} {
		if seen[loc.l] {
			continue
		}
		seen[loc.l] = true
		where := loc.l.Bucket + "/" + strings.Trim(loc.l.Path, "/")
		if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(loc.l.Bucket)}); err != nil {
			return fail(loc.what+"_bucket", fmt.Sprintf("bucket %s is not reachable: %s", loc.l.Bucket, describe(err)))
		}
		pass(loc.what+"_bucket", "bucket "+loc.l.Bucket+" is reachable")
		tags, err := client.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(loc.l.Bucket)})
		var set []types.Tag
		if err == nil {
			set = tags.TagSet
		} else if code(err) != "NoSuchTagSet" && code(err) != "NoSuchTagSetError" {
			return fail(loc.what+"_bucket_tag", fmt.Sprintf("could not read the tags of bucket %s: %s", loc.l.Bucket, describe(err)))
		}
		if msg, ok := c.tagged("bucket "+loc.l.Bucket, r.BucketTag, func(yield func(k, v string)) {
			for _, t := range set {
				yield(aws.ToString(t.Key), aws.ToString(t.Value))
			}
		}); !ok {
			return fail(loc.what+"_bucket_tag", msg)
		} else {
			pass(loc.what+"_bucket_tag", msg)
		}
		if msg, ok := probe(ctx, client, loc.l); !ok {
			return fail(loc.what+"_probe", msg)
		}
		pass(loc.what+"_probe", "a probe object was written, read back and deleted in "+where)
	}
	res.Verified = true
	res.Message = "verified: the service can use the storage"
	return res
}

// checkRole reads the role (with the assumed role's credentials): its trust policy must
// require the external id, and it must carry the cluster tag.
func (c Config) checkRole(ctx context.Context, creds aws.CredentialsProvider, r Request) (string, bool) {
	name := r.RoleARN[strings.LastIndex(r.RoleARN, "/")+1:]
	ic := iam.NewFromConfig(c.awsConfig(creds))
	role, err := ic.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		return "could not read the role: " + codeOnly(err), false
	}
	if r.ExternalID != "" {
		ids := trustedExternalIDs(aws.ToString(role.Role.AssumeRolePolicyDocument))
		if len(ids) == 0 {
			return "the role's trust policy does not require an external id (condition sts:ExternalId)", false
		}
		found := false
		for _, id := range ids {
			found = found || id == r.ExternalID
		}
		if !found {
			return "the role's trust policy requires a different external id", false
		}
	}
	tags, err := ic.ListRoleTags(ctx, &iam.ListRoleTagsInput{RoleName: aws.String(name)})
	if err != nil {
		return "could not read the role's tags: " + codeOnly(err), false
	}
	return c.tagged("the role", r.BucketTag, func(yield func(k, v string)) {
		for _, t := range tags.Tags {
			yield(aws.ToString(t.Key), aws.ToString(t.Value))
		}
	})
}

// tagged checks that tags hold the cluster tag (with value want, when want is set).
func (c Config) tagged(what, want string, tags func(yield func(k, v string))) (string, bool) {
	key := c.TagKey()
	var got *string
	tags(func(k, v string) {
		if k == key {
			got = &v
		}
	})
	switch {
	case got == nil:
		return fmt.Sprintf("%s has no tag %s", what, key), false
	case want != "" && *got != want:
		return fmt.Sprintf("%s has tag %s = %q, want %q (database_bucket_tag)", what, key, *got, want), false
	}
	return fmt.Sprintf("%s carries tag %s = %q", what, key, *got), true
}

// probe writes, reads back and deletes a probe object under the location.
func probe(ctx context.Context, client *s3.Client, l Location) (string, bool) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	body := []byte("svc verify-s3-access probe " + hex.EncodeToString(b[:]))
	key := strings.Trim(l.Path, "/")
	if key != "" {
		key += "/"
	}
	key += ".svc-verify-" + hex.EncodeToString(b[:8])
	where := l.Bucket + "/" + key
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(l.Bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		return fmt.Sprintf("could not write probe object %s: %s", where, describe(err)), false
	}
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(l.Bucket), Key: aws.String(key)})
	if err != nil {
		return fmt.Sprintf("wrote but could not read probe object %s: %s", where, describe(err)), false
	}
	read, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || !bytes.Equal(read, body) {
		return fmt.Sprintf("probe object %s read back differs from what was written", where), false
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(l.Bucket), Key: aws.String(key)}); err != nil {
		return fmt.Sprintf("could not delete probe object %s: %s", where, describe(err)), false
	}
	return "", true
}

// trustedExternalIDs returns the sts:ExternalId values the trust policy's Allow
// statements require.
func trustedExternalIDs(doc string) []string {
	if d, err := url.QueryUnescape(doc); err == nil {
		doc = d
	}
	var p struct {
		Statement []struct {
			Effect    string
			Condition map[string]map[string]any
		}
	}
	if json.Unmarshal([]byte(doc), &p) != nil {
		return nil
	}
	var ids []string
	for _, s := range p.Statement {
		if s.Effect != "Allow" {
			continue
		}
		for op, kv := range s.Condition {
			if op != "StringEquals" && op != "StringLike" {
				continue
			}
			for k, v := range kv {
				if !strings.EqualFold(k, "sts:ExternalId") {
					continue
				}
				switch v := v.(type) {
				case string:
					ids = append(ids, v)
				case []any:
					for _, x := range v {
						if s, ok := x.(string); ok {
							ids = append(ids, s)
						}
					}
				}
			}
		}
	}
	return ids
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// code is the storage's error code, or "".
func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// codeOnly names an error by the storage's code alone: the messages of role errors
// name the role, which answers never repeat (role_arn is only ever in requests).
func codeOnly(err error) string {
	if c := code(err); c != "" {
		return c
	}
	return "the storage did not answer"
}

// describe names an error by the storage's code and message; other errors (the network)
// by their text, which holds addresses but no credentials.
func describe(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if m := ae.ErrorMessage(); m != "" {
			return ae.ErrorCode() + " (" + m + ")"
		}
		return ae.ErrorCode()
	}
	return err.Error()
}
