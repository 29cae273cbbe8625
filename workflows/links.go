package workflows

import (
	"net/url"
	"strings"
)

// InboxLink is the inbox page of a run, or of one of its work items when
// itemID is not "": inboxURL/runs/RUN, inboxURL/runs/RUN/items/ITEM. The
// web inbox (gateway/inbox) serves these pages and links between them; the
// run's details in the Temporal UI and the overdue notifications link to
// them too.
func InboxLink(inboxURL, runID, itemID string) string {
	u := strings.TrimRight(inboxURL, "/") + "/runs/" + url.PathEscape(runID)
	if itemID != "" {
		u += "/items/" + url.PathEscape(itemID)
	}
	return u
}
