package tests

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/baton-run/baton/interpreter"
)

// BenchmarkWriteTimeline says where a write's time goes: it walks runs of
// the latency benchmark's process with tracing on and reports, for claim,
// submit and decide, the median length of each leg of one call, from its
// spans:
//
//   - gateway-in: the request's arrival to the Temporal update (HTTP, MCP,
//     auth, the argument checks);
//   - to-worker: the update to the worker's validator (Temporal hands the
//     update to the run's workflow task);
//   - worker: the validator to the handler's end, of which read-model is
//     the PostgreSQL transaction that writes the read model and the answer;
//   - to-answer: the handler's end to the update's answer (Temporal
//     completes the workflow task and answers);
//   - gateway-out: the answer to the response.
//
// Tracing adds its own cost to each leg, so the legs add up to a little
// more than BenchmarkToolLatency's times.
func BenchmarkWriteTimeline(b *testing.B) {
	bt, rec := startTraced(b)
	bt.publish(benchSrc)
	agent := bt.connect(agentID)
	ann := bt.connect(personID("ann@example.com", "reviewers"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var v interpreter.View
		agent.ok("start_run", map[string]any{"process": "bench", "inputs": map[string]any{}, "requestId": rid()}, &v)
		var cl interpreter.ClaimWire
		agent.ok("claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}, &cl)
		agent.ok("submit", map[string]any{"token": cl.Token, "output": map[string]any{"done": true}, "summary": "Done.", "requestId": rid()}, &v)
		wi := v.WorkItems[0]
		ann.ok("decide", map[string]any{"runId": v.Run.ID, "workItemId": wi.ID, "snapshot": wi.Snapshot, "decision": "approved", "requestId": rid()}, nil)
	}
	b.StopTimer()
	time.Sleep(time.Second) // the last spans end after the answers
	traces := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		id := s.SpanContext().TraceID().String()
		traces[id] = append(traces[id], s)
	}
	for _, tool := range []string{"claim", "submit", "decide"} {
		legs := map[string][]time.Duration{}
		for _, spans := range traces {
			s := map[string]sdktrace.ReadOnlySpan{}
			for _, span := range spans {
				s[span.Name()] = span
			}
			req, update, validate, handle, write := s["POST /mcp"], s["UpdateWorkflow:"+tool], s["ValidateUpdate:"+tool], s["HandleUpdate:"+tool], s["read model write"]
			if s["tool "+tool] == nil || req == nil || update == nil || validate == nil || handle == nil || write == nil {
				continue
			}
			legs["gateway-in"] = append(legs["gateway-in"], update.StartTime().Sub(req.StartTime()))
			legs["to-worker"] = append(legs["to-worker"], validate.StartTime().Sub(update.StartTime()))
			legs["worker"] = append(legs["worker"], handle.EndTime().Sub(validate.StartTime()))
			legs["read-model"] = append(legs["read-model"], write.EndTime().Sub(write.StartTime()))
			legs["to-answer"] = append(legs["to-answer"], update.EndTime().Sub(handle.EndTime()))
			legs["gateway-out"] = append(legs["gateway-out"], req.EndTime().Sub(update.EndTime()))
		}
		if len(legs["worker"]) < b.N/2 {
			b.Fatalf("%s: %d whole traces of %d calls", tool, len(legs["worker"]), b.N)
		}
		for leg, ds := range legs {
			b.ReportMetric(ms(median(ds)), tool+"-"+leg+"-ms")
		}
	}
}
