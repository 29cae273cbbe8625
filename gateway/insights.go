package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// insightsURIPrefix names the insights resource: baton://insights/{process}.
const insightsURIPrefix = "baton://insights/"

// InsightsWindow is the window the insights resource reports over.
const InsightsWindow = 30 * 24 * time.Hour

// addInsightsResource registers baton://insights/{process}.
func (g *Gateway) addInsightsResource() {
	g.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: insightsURIPrefix + "{process}",
		Name:        "insights",
		Title:       "Where a process's runs wait",
		Description: "The figures of baton insights for a process over the last 30 days: runs, per step the waits, work times, who did the work, rework, returns, refusals and overdue steps, open work now, check verdicts against people's decisions, and the oldest open steps. For operators and agents of the organization.",
		MIMEType:    "application/json",
	}, g.readInsights)
}

// readInsights answers baton://insights/{process}.
func (g *Gateway) readInsights(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := identityOf(req.Extra)
	if id == nil {
		return nil, g.resourceError(ctx, uri, forbidden("No identity: send a bearer token."))
	}
	r, _, err := g.Insights(ctx, *id, strings.TrimPrefix(uri, insightsURIPrefix), InsightsWindow)
	if err != nil {
		return nil, g.resourceError(ctx, uri, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// mayReadInsights refuses identities other than operators and agents:
// the figures span every run of the organization's process, so people see
// them only as operators.
func mayReadInsights(id auth.Identity) error {
	if id.Kind != auth.KindOperator && id.Kind != auth.KindAgent {
		return forbidden("Insights are for the organization's operators and agents; ask an operator.")
	}
	return nil
}

// Insights returns the figures of a process of the identity's organization
// over the last since, fitted to its latest published version, which it
// returns too; the oldest open items link into the inbox when one is
// mounted. Only operators and agents may read them (forbidden otherwise);
// a process that was never published is not_found.
func (g *Gateway) Insights(ctx context.Context, id auth.Identity, process string, since time.Duration) (*insights.Report, *interpreter.Process, error) {
	if err := mayReadInsights(id); err != nil {
		return nil, nil, err
	}
	org := id.OrgOr(g.opts.Org)
	pub, err := g.process(ctx, org, process, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, notFound("This organization has no published process " + interpreter.Quote(process) + "; list_processes lists them.")
	}
	if err != nil {
		return nil, nil, err
	}
	r, err := g.store.Insights(ctx, org, process, &store.InsightsOptions{Since: since})
	if err != nil {
		return nil, nil, err
	}
	r.Describe(pub.p)
	if g.opts.InboxURL != "" {
		r.Link(func(runID, itemID string) string { return workflows.InboxLink(g.opts.InboxURL, runID, itemID) })
	}
	return r, pub.p, nil
}

// InsightsProcesses lists the published processes of the identity's
// organization with their open and overdue steps now and the runs started
// in the last since, for operators and agents.
func (g *Gateway) InsightsProcesses(ctx context.Context, id auth.Identity, since time.Duration) ([]insights.ProcessSummary, error) {
	if err := mayReadInsights(id); err != nil {
		return nil, err
	}
	return g.store.InsightsProcesses(ctx, id.OrgOr(g.opts.Org), since)
}
