package notify

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// The file of docs/notifications.md, as the issue that asked for it wrote
// it.
const documentedFile = `channels:
  - kind: webhook
    url: https://hooks.acme.example/baton
    secret: { env: BATON_HOOK_SECRET }
    events: [work.opened, work.overdue]     # optional; default: every event
  - kind: webhook
    format: slack
    url: { env: SLACK_WEBHOOK_URL }         # a URL, or a reference when the URL is a secret
  - kind: email
    smtp: { host: smtp.acme.example, port: 587, username: baton, password: { file: /etc/baton/smtp.pw } }
    from: baton@acme.example
    groups: { finance-approver: finance-approvals@acme.example }
`

func TestParseTheDocumentedFile(t *testing.T) {
	f, err := Parse([]byte(documentedFile), &ParseOptions{Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Channels) != 3 {
		t.Fatalf("%d channels", len(f.Channels))
	}
	hook, slack, mail := f.Channels[0], f.Channels[1], f.Channels[2]
	if hook.ID != "webhook-1" || hook.URL.Value != "https://hooks.acme.example/baton" || hook.Secret == nil || hook.Secret.Env != "BATON_HOOK_SECRET" ||
		!slices.Equal(hook.Events, []interpreter.NoticeType{interpreter.NoticeWorkOpened, interpreter.NoticeWorkOverdue}) {
		t.Fatalf("webhook %+v", hook)
	}
	if hook.Takes(interpreter.NoticeRunEnded) || !hook.Takes(interpreter.NoticeWorkOverdue) {
		t.Fatal("the webhook's events filter does not filter")
	}
	if slack.ID != "webhook-2" || slack.Format != FormatSlack || slack.URL.Env != "SLACK_WEBHOOK_URL" || slack.Secret != nil || !slack.Takes(interpreter.NoticeCallDecided) {
		t.Fatalf("slack %+v", slack)
	}
	s := mail.SMTP
	if mail.ID != "email-3" || s == nil || s.Host != "smtp.acme.example" || s.Port != 587 || s.Username != "baton" || s.Password.File != "/etc/baton/smtp.pw" ||
		mail.From != "baton@acme.example" || mail.Groups["finance-approver"] != "finance-approvals@acme.example" {
		t.Fatalf("email %+v smtp %+v", mail, s)
	}
	if mail.Takes(interpreter.NoticeCallAwaitingApproval) || !mail.Takes(interpreter.NoticeRunEnded) {
		t.Fatal("an email channel without events takes a call's events, or not a run's end")
	}
}

func TestParseResolvesRelativeFilesAgainstTheFile(t *testing.T) {
	src := "channels:\n  - kind: email\n    name: mail\n    smtp: { host: mx.example, username: u, password: { file: smtp.pw }, ca: ca.pem }\n    from: b@example.com\n    include_inputs: [invoiceId]\n"
	f, err := Parse([]byte(src), &ParseOptions{Dir: "/srv/baton"})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Channel("mail")
	if c == nil || c.SMTP.Password.File != filepath.Join("/srv/baton", "smtp.pw") || c.SMTP.CA != "/srv/baton/ca.pem" || c.SMTP.Port != DefaultSMTPPort ||
		!slices.Equal(c.IncludeInputs, []string{"invoiceId"}) {
		t.Fatalf("channel %+v", c)
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"empty", "", []string{"1:1: channels: required; the file is empty"}},
		{"not a list", "channels: 3\n", []string{"1:11: channels: expected a list of channels, found a number"}},
		{"no channel", "channels: []\n", []string{"1:11: channels: at least one channel"}},
		{"unknown top key", "channel: []\n", []string{"1:1: channel: unknown field", "1:1: channels: required"}},
		{"unknown kind", "channels:\n  - kind: sms\n", []string{`2:11: channels[0].kind: unknown kind "sms" (webhook or email)`}},
		{"plain http", "channels:\n  - kind: webhook\n    url: http://hooks.acme.example/b\n    secret: { env: S }\n",
			[]string{"3:10: channels[0].url: plain http only to a loopback host (127.0.0.1, ::1, localhost); use https"}},
		{"secret written", "channels:\n  - kind: webhook\n    url: https://h.example/\n    secret: hunter2\n",
			[]string{"4:13: channels[0].secret: expected a reference { env: VAR } or { file: PATH }, found a string: the secret is never written in the file"}},
		{"no secret", "channels:\n  - kind: webhook\n    url: https://h.example/\n",
			[]string{"2:5: channels[0].secret: required: a reference { env: VAR } or { file: PATH } to the secret the receiver checks the signature with"}},
		{"both env and file", "channels:\n  - kind: webhook\n    url: https://h.example/\n    secret: { env: S, file: s.txt }\n",
			[]string{"4:23: channels[0].secret: env or file, not both"}},
		{"bad event", "channels:\n  - kind: webhook\n    format: slack\n    url: https://h.example/\n    events: [work.opened, work.opend, work.opened]\n",
			[]string{`5:27: channels[0].events[1]: unknown event type "work.opend" (work.opened, work.overdue, work.decided, run.ended, call.awaiting_approval, call.decided)`,
				`5:39: channels[0].events[2]: "work.opened" is listed twice`}},
		{"bad format", "channels:\n  - kind: webhook\n    format: teams\n    url: https://h.example/\n    secret: { env: S }\n",
			[]string{`3:13: channels[0].format: unknown format "teams" (slack; leave format out for the event's JSON)`}},
		{"email keys on a webhook", "channels:\n  - kind: webhook\n    url: https://h.example/\n    secret: { env: S }\n    from: a@b.example\n",
			[]string{"5:5: channels[0].from: only on a email channel"}},
		{"email needs", "channels:\n  - kind: email\n    smtp: { host: 'mx.example:25', port: 0, password: { env: P } }\n    from: not an address\n    groups: { finance: nobody }\n",
			[]string{
				"3:19: channels[0].smtp.host: a host name or address alone (the port goes in port)",
				"3:42: channels[0].smtp.port: expected a port number from 1 to 65535",
				"3:45: channels[0].smtp.password: needs username",
				"4:11: channels[0].from: not an email address: mail: no angle-addr",
				"5:24: channels[0].groups.finance: not an email address: mail: missing '@' or angle-addr",
			}},
		{"duplicate names", "channels:\n  - kind: webhook\n    name: ops\n    format: slack\n    url: https://h.example/\n  - kind: webhook\n    name: ops\n    format: slack\n    url: https://h.example/\n",
			[]string{`7:11: channels[1].name: "ops" is already the name of channels[0]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), &ParseOptions{Name: "notify.yaml", Dir: "/srv"})
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *FileError", err)
			}
			var got []string
			for _, is := range fe.Issues {
				got = append(got, is.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !strings.Contains(err.Error(), "notify.yaml:"+tc.want[0]) {
				t.Fatalf("the error does not name the file and position: %v", err)
			}
		})
	}
}
