package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// WebhookTimeout bounds one post to a webhook.
const WebhookTimeout = 10 * time.Second

// newHTTPClient is the client webhooks are posted with: it follows no
// redirect (the body and its signature would go wherever the receiver
// points), and a post takes at most WebhookTimeout.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout: WebhookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// webhook posts the event to a webhook channel: its JSON signed with the
// channel's secret, or a Slack message.
func (n *Notifier) webhook(ctx context.Context, c *Channel, ev Event, operators string, legacy bool) error {
	raw, err := c.URL.Resolve()
	if err != nil {
		return permanent(fmt.Errorf("webhook %s: its url (%s): %w", c.ID, c.URL, err))
	}
	shown := shownURL(c.URL, raw)
	if err := CheckURL(raw); err != nil {
		return permanent(fmt.Errorf("webhook %s: its url %s: %v", c.ID, shown, err))
	}
	var body []byte
	switch {
	case legacy:
		body, err = legacyBody(ev, operators)
	case c.Format == FormatSlack:
		body, err = json.Marshal(SlackMessage(ev))
	default:
		body, err = json.Marshal(ev)
	}
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, raw, bytes.NewReader(body))
	if err != nil {
		return permanent(fmt.Errorf("webhook %s: its url %s cannot be posted to", c.ID, shown))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Baton")
	if !legacy && c.Format != FormatSlack {
		req.Header.Set("Baton-Event-Id", ev.ID)
		req.Header.Set("Baton-Event-Type", ev.Type)
	}
	if c.Secret != nil {
		secret, err := c.Secret.Resolve()
		if err != nil {
			return fmt.Errorf("webhook %s: its secret (%s): %w", c.ID, c.Secret, err)
		}
		req.Header.Set(SignatureHeader, Sign([]byte(secret), n.now(), body))
	}
	resp, err := n.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error names the whole URL, which may be the secret.
			err = ue.Err
		}
		return fmt.Errorf("webhook %s: POST %s: %v", c.ID, shown, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("webhook %s: POST %s answered %s", c.ID, shown, resp.Status)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			err = fmt.Errorf("%w; Baton follows no redirect: fix the channel's url", err)
		}
		return err
	}
	return nil
}

// shownURL is how a message names a webhook's url: a url read from a
// reference by its host alone (the path of a Slack webhook is its
// secret), a written one without userinfo, query and fragment.
func shownURL(r Ref, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(" + r.String() + ")"
	}
	if r.Secret() {
		return u.Scheme + "://" + u.Host + "/… (" + r.String() + ")"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// legacyBody is the body --webhook has always posted for an overdue step:
// {"event":"step_overdue","org":…,"effect":{…},"url":…}.
func legacyBody(ev Event, operators string) ([]byte, error) {
	effect := map[string]any{"kind": "overdue", "runId": ev.Run.ID, "org": ev.Org, "operators": operators}
	if w := ev.WorkItem; w != nil {
		effect["stepId"], effect["workItemId"], effect["assignedTo"] = w.StepID, w.ID, w.AssignedTo
		if w.Due != nil {
			effect["due"] = *w.Due
		}
	}
	if s := ev.Step; s != nil {
		effect["stepId"], effect["due"] = s.ID, s.Due
	}
	msg := map[string]any{"event": "step_overdue", "org": ev.Org, "effect": effect}
	if l := ev.link(); l != "" {
		msg["url"] = l
	}
	return json.Marshal(msg)
}
