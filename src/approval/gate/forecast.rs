//! Which calls of a batch the gate expects to put to the approver, told before it takes the
//! first one, so a person sees how many questions are coming. Only a forecast: it consumes no
//! grant uses, audits nothing and decides nothing. `Gate::check` alone decides, and it may still
//! differ (a session grant given for an earlier call of the batch, a file changed meanwhile).

use super::*;

impl Gate {
    /// Waits (bounded by each server's start-up limit, or until `cancel`) while a server that
    /// one of `calls` names is still starting, so the forecast, like `check`, judges those calls
    /// on the tools it lists, not as unknown tools. Costs nothing when no MCP server is starting.
    pub async fn settle_mcp(&self, calls: &[ToolCall], cancel: &CancellationToken) {
        let Some(mcp) = &self.policy.mcp else {
            return;
        };
        let limit = crate::mcp::config::DEFAULT_STARTUP_TIMEOUT;
        let all = async {
            for call in calls {
                mcp.settle(&call.tool, limit).await;
            }
        };
        tokio::select! {
            _ = all => {}
            _ = cancel.cancelled() => {}
        }
    }

    /// Whether `check` would ask the approver for this call as things are now: the policy says
    /// ask, and no live session grant covers it.
    pub fn would_ask(&self, call: &ToolCall) -> bool {
        self.forecast(call).0
    }

    /// Whether `check` would ask (see [`Gate::would_ask`]), and for a command, the sandbox it
    /// would run in, in the words the modal uses: two calls of a batch that differ only in
    /// their profile are told apart before either is asked.
    pub fn forecast(&self, call: &ToolCall) -> (bool, Option<crate::protocol::SandboxLabel>) {
        // The arguments as the model sent them: the same value `check` reads back from their
        // frozen text, without hashing a large file's content twice.
        let verdict = self.assess(&call.tool, &call.args).verdict;
        let sandbox = self
            .policy
            .runs_commands(&call.tool)
            .then(|| {
                let args = self.fill_profile(&call.tool, &call.args);
                crate::sandbox::label_of(&args, &verdict)
            })
            .flatten();
        (self.asks(call, &verdict), sandbox)
    }

    fn asks(&self, call: &ToolCall, verdict: &Verdict) -> bool {
        if verdict.ruling != Ruling::Ask {
            return false;
        }
        let covered = verdict.no_session_grant.is_none()
            && verdict.asking_subjects().is_some_and(|subjects| {
                self.grants.would_cover(
                    &self.config.session,
                    &self.workspace(),
                    &crate::sandbox::grant_tool(
                        &call.tool,
                        &self.fill_profile(&call.tool, &call.args),
                    ),
                    &subjects,
                    (self.clock)(),
                )
            });
        !covered
    }
}
