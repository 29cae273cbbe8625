// Package notify delivers a run's events to the channels of its
// organization (docs/notifications.md): signed webhooks, Slack messages
// and email. It reads each organization's channels file, with every issue
// reported at its line and column; says which channels an event goes to
// (Plan); and delivers it to one channel (Deliver), which the worker runs
// as an activity of the run, retried until it succeeds or gives up.
//
// Secrets (a webhook's signing secret, a URL that is one, an SMTP
// password) are references, read where and when a delivery is made; no
// message, log line or error holds them.
package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// LegacyChannel is the id of the deployment-wide webhook of --webhook:
// every organization's work.overdue events, in the body it always had,
// unsigned.
const LegacyChannel = "--webhook"

// ErrPermanent is wrapped by a delivery error that no retry can mend (the
// channel is gone, its URL is refused, its server refuses clear text): the
// operator must fix the file.
var ErrPermanent = errors.New("no retry can deliver this")

func permanent(err error) error { return fmt.Errorf("%w (%w)", err, ErrPermanent) }

// Options configure a Notifier.
type Options struct {
	// Link is the inbox page of a run's work item or of the run, which
	// every event links to. Default: none, and events carry no link.
	Link LinkFunc
	// Inputs reads a run's inputs, for the email channels that name some
	// (include_inputs). Default: none; such mails show no inputs.
	Inputs func(ctx context.Context, org, runID string) (map[string]any, error)
	// Webhook is the deployment-wide webhook of --webhook, which receives
	// every organization's work.overdue events as it always has. Default
	// "": none.
	Webhook string
	// HTTPClient posts webhooks. Default: a client that follows no
	// redirect and gives a post WebhookTimeout.
	HTTPClient *http.Client
	// Now is the clock signatures and mails are dated by. Default
	// time.Now.
	Now func() time.Time
}

// Notifier delivers events to the channels of each organization.
type Notifier struct {
	files map[string]*File
	opts  Options
	http  *http.Client
}

// New returns a Notifier over each organization's channels file (by
// organization id; an organization without one has no channels). Nil
// options mean defaults.
func New(files map[string]*File, opts *Options) (*Notifier, error) {
	n := &Notifier{files: map[string]*File{}}
	for org, f := range files {
		if f == nil {
			return nil, fmt.Errorf("notify: organization %s has a nil channels file", org)
		}
		n.files[org] = f
	}
	if opts != nil {
		n.opts = *opts
	}
	if n.opts.Webhook != "" {
		if err := CheckURL(n.opts.Webhook); err != nil {
			return nil, fmt.Errorf("--webhook %s", err)
		}
	}
	n.http = n.opts.HTTPClient
	if n.http == nil {
		n.http = newHTTPClient()
	}
	if n.opts.Now == nil {
		n.opts.Now = time.Now
	}
	return n, nil
}

func (n *Notifier) now() time.Time { return n.opts.Now() }

// Orgs is how many organizations have channels.
func (n *Notifier) Orgs() int { return len(n.files) }

// Plan returns the ids of the channels of org that take the notice: those
// whose events include its type and, for email, that have someone to mail.
// A test run's notice goes nowhere (the machine asks for none).
func (n *Notifier) Plan(org string, no *interpreter.Notice) []string {
	if no == nil || no.Run.Mode == interpreter.ModeTest {
		return nil
	}
	var ids []string
	if f := n.files[org]; f != nil {
		for i := range f.Channels {
			c := &f.Channels[i]
			if !c.Takes(no.Type) {
				continue
			}
			if c.Kind == KindEmail && len(Recipients(c, no)) == 0 {
				continue
			}
			ids = append(ids, c.ID)
		}
	}
	if n.opts.Webhook != "" && no.Type == interpreter.NoticeWorkOverdue {
		ids = append(ids, LegacyChannel)
	}
	return ids
}

// Deliver delivers the notice of a run of org to one of the channels Plan
// named. An error wrapping ErrPermanent will not go away with a retry.
func (n *Notifier) Deliver(ctx context.Context, org, channel string, no *interpreter.Notice) error {
	if no.Run.Mode == interpreter.ModeTest {
		return nil
	}
	ev := NewEvent(org, no, n.opts.Link)
	if channel == LegacyChannel {
		if n.opts.Webhook == "" {
			return permanent(errors.New("--webhook is no longer set"))
		}
		return n.webhook(ctx, &Channel{ID: LegacyChannel, Kind: KindWebhook, URL: Ref{Value: n.opts.Webhook}}, ev, no.Operators, true)
	}
	c := n.files[org].Channel(channel)
	if c == nil {
		return permanent(fmt.Errorf("organization %s has no channel %s now", org, channel))
	}
	switch c.Kind {
	case KindWebhook:
		return n.webhook(ctx, c, ev, no.Operators, false)
	case KindEmail:
		to := Recipients(c, no)
		if len(to) == 0 {
			return nil
		}
		var inputs map[string]any
		if len(c.IncludeInputs) > 0 && n.opts.Inputs != nil {
			var err error
			if inputs, err = n.opts.Inputs(ctx, org, no.Run.ID); err != nil {
				return fmt.Errorf("email %s: reading the run's inputs: %w", c.ID, err)
			}
		}
		return n.sendEmail(ctx, c, NewEmail(c, ev, to, inputs))
	}
	return permanent(fmt.Errorf("channel %s has an unknown kind %q", c.ID, c.Kind))
}
