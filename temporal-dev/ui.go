package temporaldev

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// webUI is the Temporal Web UI served beside the frontend. Its assets are
// embedded in the ui-server module: nothing is fetched at run time.
type webUI struct {
	srv  *uiserver.Server
	addr string        // host:port it listens on
	done chan struct{} // closed when its serving goroutine returns
}

// startUI serves the UI on host:port for the frontend at frontend, and waits
// until it answers HTTP.
func startUI(ctx context.Context, host string, port int, frontend, namespace string) (ui *webUI, err error) {
	// The UI server panics on a bad configuration and exits the process when
	// it cannot listen, so check the port first and recover here.
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if err := checkPortFree(addr); err != nil {
		return nil, fmt.Errorf("temporaldev: Options.UIPort: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("temporaldev: start the web UI: %v", r)
		}
	}()
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: frontend,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	ui = &webUI{srv: srv, addr: addr, done: make(chan struct{})}
	go func() {
		defer close(ui.done)
		_ = srv.Start() // blocks until Stop
	}()
	if err := waitHTTP(ctx, "http://"+addr+"/healthz", ui.done); err != nil {
		ui.stop()
		return nil, fmt.Errorf("temporaldev: web UI on %s: %w", addr, err)
	}
	return ui, nil
}

func (ui *webUI) stop() {
	ui.srv.Stop()
	select {
	case <-ui.done:
	case <-time.After(5 * time.Second):
	}
}

// waitHTTP polls url until it answers 200, ctx ends, or stopped is closed.
func waitHTTP(ctx context.Context, url string, stopped <-chan struct{}) error {
	hc := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not answering: %w (last: %v)", ctx.Err(), err)
		case <-stopped:
			return fmt.Errorf("stopped serving (last: %v)", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
