package svcdtest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-data/svc/infra/testenv"
)

// Browser returns a headless Chromium context for 90 seconds, or skips when Debian's
// chromium is not installed (the CI script installs it; `go tool task test` installs it
// when it can). SVC_REQUIRE_BROWSER turns the skip into a failure.
func Browser(t testing.TB) context.Context {
	t.Helper()
	return BrowserFor(t, 90*time.Second)
}

// BrowserFor is Browser with the whole session bounded by timeout.
func BrowserFor(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := testenv.Browser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}
