package controller

import (
	"encoding/json"
	"net/http"

	"github.com/kinformer/kinformer/shard/replicas"
)

// Object is what Status reports of one owned ConfigMap.
type Object struct {
	Namespace, Name, UID, ResourceVersion string
}

// Status is a replica's view: its group's state, what its handler was
// told and what its workers did, and, when asked, every object it owns.
type Status struct {
	Group replicas.Status
	// Notifications of the handler, by kind.
	Added, Updated, Deleted, Acquired, Released int64
	// Reconciled counts reconciles of owned objects, Written the stamps
	// written, NotOwned the keys dropped by the ownership check.
	Reconciled, Written, NotOwned int64
	Objects                       []Object `json:",omitempty"`
}

// Status returns the replica's view, with the owned objects if objects is
// set.
func (c *Controller) Status(objects bool) Status {
	s := Status{
		Group: c.group.Status(),
		Added: c.added.Load(), Updated: c.updated.Load(), Deleted: c.deleted.Load(),
		Acquired: c.acquired.Load(), Released: c.released.Load(),
		Reconciled: c.reconciled.Load(), Written: c.written.Load(), NotOwned: c.notOwned.Load(),
	}
	if objects {
		for _, cm := range c.cms.Cache().List() {
			s.Objects = append(s.Objects, Object{cm.Namespace, cm.Name, string(cm.UID), cm.ResourceVersion})
		}
	}
	return s
}

// StatusHandler serves Status as JSON; ?objects=1 lists the owned objects.
func (c *Controller) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.Status(r.URL.Query().Get("objects") != ""))
	})
}
