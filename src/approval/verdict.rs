//! The policy's answer: `Allow`, `Ask` or `Deny`, with every reason and the parts of the call each
//! reason is about. The types cross to the driver, so they live in `protocol`; this path stays for
//! the gate's many users.
