-- messageStatus (core) of a column `facts`, as its code (statusCodes): the expression of the messages
-- table's generated `status` column (migration 1), for the statuses a batch passes through.

CASE
      WHEN facts & {{Fact.complained}} <> 0 THEN {{statusCodes.complained}}
      WHEN facts & {{Fact.hard_bounced}} <> 0 THEN {{statusCodes.bounced}}
      WHEN facts & {{Fact.rejected}} <> 0 THEN {{statusCodes.rejected}}
      WHEN facts & {{Fact.delivered}} <> 0 THEN {{statusCodes.delivered}}
      WHEN facts & {{Fact.soft_bounced}} <> 0 THEN {{statusCodes.soft_bounced}}
      WHEN facts & {{Fact.deferred}} <> 0 THEN {{statusCodes.deferred}}
      ELSE {{statusCodes.sent}}
    END
