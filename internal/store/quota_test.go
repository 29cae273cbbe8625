package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
)

func TestPutFileWithinQuota(t *testing.T) {
	t.Parallel()
	b := setup(t)
	quota := store.UploadQuota{Bytes: 10, Window: time.Hour}
	put := func(id, by string, n int) error {
		_, err := b.store.PutFileWithinQuota(b.ctx, nil, store.File{Org: org, ID: id, Bytes: make([]byte, n), CreatedBy: by}, quota)
		return err
	}
	if err := put("f_1", "a_1", 6); err != nil {
		t.Fatal(err)
	}
	err := put("f_2", "a_1", 5)
	var qe *store.QuotaError
	if !errors.As(err, &qe) || qe.Used != 6 || qe.Size != 5 || qe.Quota != quota {
		t.Fatalf("over the quota: err = %v, want a QuotaError with Used 6, Size 5", err)
	}
	if _, err := b.store.StatFile(b.ctx, org, "f_2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused file was stored (stat: %v)", err)
	}
	if err := put("f_3", "a_1", 4); err != nil {
		t.Errorf("up to the quota exactly: %v", err)
	}
	if err := put("f_4", "a_2", 10); err != nil {
		t.Errorf("another identity: %v", err)
	}
	if err := put("f_1", "a_1", 6); !errors.Is(err, store.ErrExists) {
		t.Errorf("a taken id over the quota: err = %v, want ErrExists", err)
	}
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE files SET created_at = now() - interval '61 minutes' WHERE created_by = 'a_1'`); err != nil {
		t.Fatal(err)
	}
	if err := put("f_5", "a_1", 10); err != nil {
		t.Errorf("after the window passed: %v", err)
	}
	if _, err := b.store.PutFileWithinQuota(b.ctx, nil, store.File{Org: org, ID: "f_6", Bytes: make([]byte, 100), CreatedBy: "a_1"}, store.UploadQuota{}); err != nil {
		t.Errorf("no quota: %v", err)
	}
}

// Uploads racing from one identity cannot pass its quota together.
func TestPutFileWithinQuotaConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	quota := store.UploadQuota{Bytes: 10, Window: time.Hour}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := b.store.PutFileWithinQuota(b.ctx, nil, store.File{Org: org, ID: fmt.Sprintf("f_%d", i), Bytes: make([]byte, 3), CreatedBy: "a_1"}, quota)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	stored := 0
	for err := range errs {
		var qe *store.QuotaError
		switch {
		case err == nil:
			stored++
		case !errors.As(err, &qe):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if stored != 3 {
		t.Errorf("%d uploads of 3 bytes stored under a 10-byte quota, want 3", stored)
	}
}
