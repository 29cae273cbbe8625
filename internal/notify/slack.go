package notify

import (
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// SlackMessage is the message a webhook channel with format: slack posts:
// Slack's incoming-webhook shape, a fallback text and blocks (a section
// with the event and the item's title, a section of fields with the
// process and who the item is for, and a button linking to the inbox
// item). It holds the process's words and ids, never run data.
func SlackMessage(ev Event) map[string]any {
	headline := slackHeadline(ev)
	title := headline
	if ev.WorkItem != nil && ev.WorkItem.Title != "" {
		title = ev.WorkItem.Title
	}
	text := "*" + slackEscape(headline) + "*"
	if title != headline {
		text += "\n" + slackEscape(title)
	}
	fields := []map[string]any{
		slackField("Process", ev.Run.Process+" v"+itoa(ev.Run.Version)),
		slackField("Run", ev.Run.ID),
	}
	if w := ev.WorkItem; w != nil {
		fields = append(fields, slackField("For", assigneeText(w.AssignedTo)))
		if w.Due != nil {
			fields = append(fields, slackField("Due", *w.Due))
		}
		if w.Decision != "" {
			fields = append(fields, slackField("Decision", w.Decision+" by "+w.DecidedBy))
		}
	}
	if ev.Type == string(interpreter.NoticeRunEnded) {
		fields = append(fields, slackField("Outcome", ev.Run.Outcome), slackField("Started by", ev.Run.StartedBy))
	}
	blocks := []map[string]any{
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}},
		{"type": "section", "fields": fields},
	}
	if l := ev.link(); l != "" {
		label := "Open in the inbox"
		if ev.WorkItem == nil {
			label = "Open the run"
		}
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []map[string]any{{
			"type": "button", "text": map[string]any{"type": "plain_text", "text": label},
			"url": l, "action_id": "open", "value": ev.ID,
		}}})
	}
	fallback := headline
	if title != headline {
		fallback += ": " + title
	}
	return map[string]any{"text": fallback, "blocks": blocks}
}

func slackField(name, value string) map[string]any {
	return map[string]any{"type": "mrkdwn", "text": "*" + name + "*\n" + slackEscape(value)}
}

// slackEscape escapes the three characters Slack's mrkdwn reads as
// control characters.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackHeadline says what happened in a few words.
func slackHeadline(ev Event) string {
	return headline(ev)
}
