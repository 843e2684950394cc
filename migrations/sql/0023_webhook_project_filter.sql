-- Apps manage their own webhook subscriptions, and a subscription may keep to
-- some projects (docs/webhooks.md, docs/decisions/webhooks.md "Apps manage
-- their own webhooks"):
--   project_ids  NULL for every project; otherwise only events whose data names
--                one of these projects are delivered (events that name no
--                project, such as webhook.test, still are). The fan-out reads
--                it with the rest of the row, so the filter costs no statement.
-- No foreign key: a subscription keeps the id of a project deleted since, which
-- then simply matches nothing (and Citus cannot reference array elements).
alter table webhook_subscriptions add column project_ids uuid[];
