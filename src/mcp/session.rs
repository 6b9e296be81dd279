//! What the MCP revision the server follows, 2025-06-18, asks of a session
//! and rmcp does not check, applied to every message the transport reads
//! before rmcp sees it:
//!
//! * "Basic" (<https://modelcontextprotocol.io/specification/2025-06-18/basic>,
//!   "Requests"): a request id "MUST NOT have been previously used by the
//!   requestor within the same session". A request whose id this session
//!   already used, by a request in flight or one answered, gets a `-32600`
//!   error of its own, and the first request still gets its answer (given
//!   both, rmcp answered only one of them). The ids are kept for the
//!   session's life.
//! * "Lifecycle" (<https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle>):
//!   the session starts with `initialize`, and only `ping` may come before
//!   it. Another request before it gets a `-32600` error (rmcp 3 would take
//!   one carrying the 2026-07-28 revision's metadata as a session without
//!   `initialize`, and answer others with a `-32602` about that metadata);
//!   a notification or a response before it is dropped (rmcp's handshake
//!   takes anything but a request as a failed handshake, which ends the
//!   server).
//!
//! Batches, which 2025-06-18 removed, never reach this far: the transport
//! answers a JSON array itself.

use std::collections::HashSet;

use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::RxJsonRpcMessage;
use rmcp::RoleServer;
use serde_json::Value;

/// What the session has seen so far.
#[derive(Default)]
pub struct Session {
    /// Whether `initialize` has come.
    initialized: bool,
    /// The id of every request passed on.
    used: HashSet<RequestId>,
}

/// What to do with a message.
pub enum Admit {
    /// Hand it to rmcp.
    Pass,
    /// Nothing: a notification or response before `initialize`.
    Drop,
    /// Answer the request `id` with an Invalid Request error saying `message`.
    Refuse { id: Value, message: String },
}

impl Session {
    /// Decides what becomes of `message`, and records it.
    pub fn admit(&mut self, message: &RxJsonRpcMessage<RoleServer>) -> Admit {
        let JsonRpcMessage::Request(request) = message else {
            return if self.initialized {
                Admit::Pass
            } else {
                Admit::Drop
            };
        };
        let id = &request.id;
        let refuse = |message: String| Admit::Refuse {
            id: id.clone().into_json_value(),
            message,
        };
        if self.used.contains(id) {
            return refuse(format!(
                "Invalid Request: request id {} was already used in this session \
                 (MCP 2025-06-18: a request id must not be reused)",
                id.clone().into_json_value()
            ));
        }
        match &request.request {
            ClientRequest::InitializeRequest(_) => self.initialized = true,
            ClientRequest::PingRequest(_) => {}
            _ if !self.initialized => {
                return refuse(
                    "Invalid Request: the session is not initialized; send `initialize` first \
                     (MCP 2025-06-18: only `ping` may come before it)"
                        .to_string(),
                )
            }
            _ => {}
        }
        self.used.insert(id.clone());
        Admit::Pass
    }
}
