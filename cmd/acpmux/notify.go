package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// DefaultNotifyAfter is how long a decision waits before --notify fires.
const defaultNotifyAfter = 30 * time.Second

// notifyAttempts and notifyBackoff bound the POSTs of one notice: at most
// three, 1 s then 4 s apart.
var (
	notifyAttempts = 3
	notifyBackoff  = []time.Duration{time.Second, 4 * time.Second}
)

// stringList is a repeatable string flag; in the configuration file it is
// an array of strings.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
func (l *stringList) Get() any           { return []string(*l) }

func registerNotifyFlags(fs *flag.FlagSet, urls *stringList, after *time.Duration) {
	fs.Var(urls, "notify", "POST a notice to URL (ntfy format: plain text body, Title and Click headers) when a permission request has waited --notify-after; repeatable")
	fs.DurationVar(after, "notify-after", defaultNotifyAfter, "how long a permission request must stay open before --notify fires")
}

// notifier posts a notice to each URL for every decision still open after
// a delay (docs/notify.md). Its goroutines end by close.
type notifier struct {
	urls   []string
	after  time.Duration
	client *http.Client
	name   string // the bridge, as the notice names it
	page   string // the approvals page without the token, or ""
	log    *slog.Logger

	wg     sync.WaitGroup
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
}

func newNotifier(urls []string, after time.Duration, name string, log *slog.Logger) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{urls: urls, after: after, client: &http.Client{Timeout: 10 * time.Second},
		name: name, log: log, ctx: ctx, cancel: cancel}
}

// notice is what one notification says.
type notice struct {
	title, body, click string
}

// opened is confirm.Options.OnOpen: it watches d.
func (n *notifier) opened(d *confirm.Decision) {
	open := func() bool { return d.Status() == store.StatusOpen }
	n.watch(d.Done(), open, func() notice { return n.noticeFor(d.Snapshot(), d.CreatedAt()) })
}

// watch waits n.after, then, unless done was closed or open says no,
// sends the notice build returns to every URL.
func (n *notifier) watch(done <-chan struct{}, open func() bool, build func() notice) {
	n.wg.Go(func() {
		t := time.NewTimer(n.after)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		if !open() {
			return
		}
		nt := build()
		for _, u := range n.urls {
			n.wg.Go(func() { n.post(u, nt) })
		}
	})
}

// noticeFor builds the notice of a waiting decision: no token, no request
// bytes, only the command's first line (or the title), the bridge, the
// session and the page's address.
func (n *notifier) noticeFor(s confirm.Snapshot, created time.Time) notice {
	what := s.Command
	if what == "" {
		what = s.Title
	}
	what, _, _ = strings.Cut(what, "\n")
	if len(what) > 200 {
		what = what[:200] + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", what)
	fmt.Fprintf(&b, "%s, session %s, waiting since %s\n", n.name, s.SessionID, created.Local().Format("15:04:05"))
	if n.page != "" {
		fmt.Fprintf(&b, "%s\n", n.page)
	}
	return notice{title: headerSafe("acpmux: permission request waiting on " + n.name), body: b.String(), click: n.page}
}

// headerSafe keeps printable ASCII, so a value is a valid header value.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// post sends nt to u, up to notifyAttempts times while it fails with a
// network error, 429 or a 5xx status.
func (n *notifier) post(u string, nt notice) {
	var err error
	for i := range notifyAttempts {
		if i > 0 {
			select {
			case <-time.After(notifyBackoff[min(i-1, len(notifyBackoff)-1)]):
			case <-n.ctx.Done():
				return
			}
		}
		var retry bool
		if retry, err = n.postOnce(u, nt); err == nil || !retry {
			break
		}
	}
	if err != nil {
		n.log.Warn("notify failed", "url", redactURL(u), "err", err)
		return
	}
	n.log.Info("notify sent", "url", redactURL(u))
}

func (n *notifier) postOnce(u string, nt notice) (retry bool, err error) {
	req, err := http.NewRequestWithContext(n.ctx, "POST", u, strings.NewReader(nt.body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", nt.title)
	req.Header.Set("Tags", "warning")
	if nt.click != "" {
		req.Header.Set("Click", nt.click)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return true, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("status %s", resp.Status)
	}
	return false, fmt.Errorf("status %s", resp.Status)
}

// redactURL is u without its user info, path and query (an ntfy topic or
// an access token may be secret), for logs.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Scheme + "://" + p.Host + "/…"
}

// close stops the waits and the retries and waits for the goroutines.
func (n *notifier) close() {
	n.cancel()
	n.wg.Wait()
}
