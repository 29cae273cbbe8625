package gateway

import (
	"fmt"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// DefaultUploadQuotaBytes is what one identity may upload per hour unless
// Options.UploadQuota says otherwise: 512 MiB, some fifty files of the
// largest size.
const DefaultUploadQuotaBytes = 512 << 20

// DefaultUploadQuotaWindow is the window an upload quota counts unless
// UploadQuota.Window says otherwise.
const DefaultUploadQuotaWindow = time.Hour

// UploadQuota limits what one identity may upload, counted in PostgreSQL
// over every gateway of the deployment. An upload that would pass it is
// refused with retry: nothing is stored, and the same call succeeds once
// older uploads leave the window.
type UploadQuota struct {
	// Bytes is the most one identity may upload within Window. Default
	// DefaultUploadQuotaBytes; negative means no quota.
	Bytes int64
	// Window is the sliding window the quota counts. Default
	// DefaultUploadQuotaWindow.
	Window time.Duration
}

// store returns the quota with its defaults, as the store takes it.
func (q UploadQuota) store() store.UploadQuota {
	switch {
	case q.Bytes < 0:
		return store.UploadQuota{}
	case q.Bytes == 0:
		q.Bytes = DefaultUploadQuotaBytes
	}
	if q.Window <= 0 {
		q.Window = DefaultUploadQuotaWindow
	}
	return store.UploadQuota{Bytes: q.Bytes, Window: q.Window}
}

// quotaRefusal is the answer to an upload past its identity's quota.
func quotaRefusal(e *store.QuotaError) *interpreter.Error {
	return interpreter.Refuse(interpreter.CodeRetry,
		fmt.Sprintf("This identity uploaded %d bytes in the last %v; this file's %d bytes would pass its quota of %d bytes per %v. Retry later with the same requestId.",
			e.Used, e.Quota.Window, e.Size, e.Quota.Bytes, e.Quota.Window),
		fmt.Sprintf("contentBase64: over the upload quota of %d bytes per %v", e.Quota.Bytes, e.Quota.Window))
}
