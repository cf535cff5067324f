package s3store

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// reachTimeout bounds Reachable.
const reachTimeout = 5 * time.Second

// Reachable reports whether the endpoint keeping data under bucket/path answers at all:
// any HTTP answer, an S3 error included, is an answer; a refused connection, a reset or
// no answer within 5 s is not. It signs nothing and reads no object: the consumer asks
// it before trying an insert into a parked table again, so that inserts the engine cannot
// finish (it keeps them running after their client left) do not pile up in it.
func (c Config) Reachable(ctx context.Context, bucket, path string) error {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	u, err := c.URL(bucket, path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return err
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("storage of bucket %s does not answer", bucket)
	}
	_ = r.Body.Close()
	return nil
}
