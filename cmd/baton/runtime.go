package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// runtimeConfig is the runtime flags that dev, serve, gateway and worker
// share, registered once with the defaults the packages export.
type runtimeConfig struct {
	opsConfig
	org       string
	tools     listFlag
	evaluator evaluatorConfig
	drain     time.Duration

	// The worker's.
	workflowCache int
	webhook       string
	notify        listFlag

	// The gateway's.
	listen                                 string
	lease, callWait                        time.Duration
	uploadQuotaWindow, requestRetention    time.Duration
	maxUpload, maxRequests, maxPerIdentity int
	// maxChildren caps the children of one process step.
	maxChildren int
	uploadQuota int64
}

// runtimeFlags says which runtime flags a command takes, and the defaults
// that differ between commands.
type runtimeFlags struct {
	gateway, worker bool
	// evaluator is the evaluator kind when no flag names one.
	evaluator string
	// opsListen is --ops-listen's default: "" (off) but in dev.
	opsListen string
}

// defaultDrain is how long a stopping process lets calls in flight finish.
const defaultDrain = 30 * time.Second

func (c *runtimeConfig) flags(fl *flag.FlagSet, which runtimeFlags) {
	c.opsConfig.flags(fl, which.opsListen)
	stringFlag(fl, &c.org, "org", auth.DefaultOrg, "default organization: that of tokens naming none, and of --processes DIR and --tools FILE")
	c.evaluator.register(fl, which.evaluator)
	fl.Var(&c.tools, "tools", "[ORG=]FILE: tool registration file (YAML) of the baton-tools-1 profile for organization ORG (default --org): agents call these servers' tools through Baton; repeatable, one per organization; give gateways and workers the same files")
	durationFlag(fl, &c.drain, "drain", defaultDrain, "on SIGTERM or Ctrl-C, how long calls in flight (and the worker's activities) may take to finish before they are cut; a cut call answers retry")
	if which.worker {
		intFlag(fl, &c.workflowCache, "workflow-cache", defaultWorkflowCache, "runs the worker keeps in memory between their tasks; others are replayed from history when they next have work")
		stringFlag(fl, &c.webhook, "webhook", "", "URL receiving every organization's overdue steps as JSON POSTs (docs/notifications.md says how to move to --notify)")
		fl.Var(&c.notify, "notify", "[ORG=]FILE: notification channels file (YAML) of organization ORG (default --org): where its runs' events go, by webhook, Slack or email; repeatable, one per organization; give every worker the same files")
	}
	if which.gateway {
		stringFlag(fl, &c.listen, "listen", "127.0.0.1:8080", "gateway address")
		durationFlag(fl, &c.lease, "lease", gateway.DefaultLease, "claim lease length")
		durationFlag(fl, &c.callWait, "call-wait", gateway.DefaultCallWait, "how long a call waits for Temporal and PostgreSQL before answering retry")
		intFlag(fl, &c.maxUpload, "max-upload-bytes", gateway.DefaultMaxUploadBytes, "largest upload")
		intFlag(fl, &c.maxRequests, "max-requests", gateway.DefaultMaxRequests, "most requests served at once; more wait up to 5s, then get 503")
		intFlag(fl, &c.maxPerIdentity, "max-requests-per-identity", gateway.DefaultRequestsPerIdentity, "most requests of one identity served at once; more get retry (HTTP 429) at once")
		intFlag(fl, &c.maxChildren, "subprocess-children", interpreter.DefaultMaxChildren, "most children one process step of a run may start (baton-subprocess-1); a for_each over more fails the run")
		int64Flag(fl, &c.uploadQuota, "upload-quota-bytes", gateway.DefaultUploadQuotaBytes, "most bytes one identity may upload per --upload-quota-window; 0 for no quota")
		durationFlag(fl, &c.uploadQuotaWindow, "upload-quota-window", gateway.DefaultUploadQuotaWindow, "the window --upload-quota-bytes counts")
		durationFlag(fl, &c.requestRetention, "request-retention", gateway.DefaultRequestRetention, "how long requestIds are remembered for replays (at least 24h); older records are swept hourly")
	}
}

// check refuses runtime settings out of range, before anything connects
// or is created.
func (c *runtimeConfig) check(withGateway bool) error {
	if c.drain < 0 {
		return fmt.Errorf("--drain %v is negative", c.drain)
	}
	if !withGateway {
		return nil
	}
	if err := gateway.CheckLease(c.lease); err != nil {
		return fmt.Errorf("--lease %w", err)
	}
	if err := gateway.CheckCallWait(c.callWait); err != nil {
		return fmt.Errorf("--call-wait %w", err)
	}
	if c.maxUpload < 1 {
		return fmt.Errorf("--max-upload-bytes %d must be at least 1", c.maxUpload)
	}
	if c.maxRequests < 1 {
		return fmt.Errorf("--max-requests %d must be at least 1", c.maxRequests)
	}
	if c.maxChildren < 1 {
		return fmt.Errorf("--subprocess-children %d must be at least 1", c.maxChildren)
	}
	if c.maxPerIdentity < 1 {
		return fmt.Errorf("--max-requests-per-identity %d must be at least 1", c.maxPerIdentity)
	}
	if c.requestRetention < gateway.MinRequestRetention {
		return fmt.Errorf("--request-retention %v is under the minimum of %v: clients may still retry those requestIds", c.requestRetention, gateway.MinRequestRetention)
	}
	if c.uploadQuota < 0 || c.uploadQuotaWindow < time.Second {
		return fmt.Errorf("--upload-quota-bytes %d per --upload-quota-window %v: want bytes 0 (no quota) or more per 1s or more", c.uploadQuota, c.uploadQuotaWindow)
	}
	return nil
}

// gatewayQuota is --upload-quota-bytes per --upload-quota-window, as the
// gateway takes it.
func (c *runtimeConfig) gatewayQuota() gateway.UploadQuota {
	if c.uploadQuota == 0 {
		return gateway.UploadQuota{Bytes: -1}
	}
	return gateway.UploadQuota{Bytes: c.uploadQuota, Window: c.uploadQuotaWindow}
}
