-- An ended run's view never changes again. The workflow writes it once, so
-- get_run serves ended runs from here, whatever Temporal's retention; json
-- keeps the view's key order as written.
ALTER TABLE runs ADD COLUMN final_view json;
