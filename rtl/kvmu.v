// KV-cache management unit (KVMU) of the FPGA draft decoder, synthesizable Verilog-2005.
//
// The register semantics are those of the behavioural model (models/kvmu_model.cpp,
// docs/system.md): three pointers into the KV cache, valid <= curr <= ahead, four modes
// and the input MUX, and up to MAX_DEPTH marks (the ends of finished step-ahead steps).
//
// One operation per clock cycle, sampled at the rising edge:
//   cmd      the host command of this cycle (CMD_* below; cmd_arg: INIT's position,
//            DEPTH's depth);
//   tok_we   the token-written strobe: the decoder wrote one token's KV at ahead this
//            cycle; tok_pcie says which stream it came from (1: a target token from PCIe,
//            0: a drafted token from the local sampler) and must agree with the MUX.
// A command and a token write in the same cycle is a protocol error. The outputs are
// registers, valid from the edge that applied the operation. An illegal operation
// changes no state and raises err for one cycle with the reason in err_code (ERR_*).
// The mode encoding is the model's: 0 initialization, 1 speculation, 2 accept,
// 3 rollback; mux_pcie is 1 in initialization and rollback (the decoder's next input
// comes from PCIe), 0 in speculation and accept (the local sampler).
//
// Fault injection for the testbench: defining KVMU_FAULT_ACCEPT_KEEPS_VALID builds a
// broken variant whose accept leaves valid where it was.
`default_nettype none

module kvmu #(
    parameter PTR_W = 32,     // pointer width, bits: the KV cache holds < 2**PTR_W tokens
    parameter MAX_DEPTH = 2   // most step-ahead steps (and marks) the block can hold, 1 to 3
) (
    input  wire                         clk,
    input  wire                         rst_n,      // synchronous, active low
    input  wire [PTR_W-1:0]             capacity,   // KV cache reserved, tokens (static)
    input  wire [2:0]                   cmd,
    input  wire [PTR_W-1:0]             cmd_arg,
    input  wire                         tok_we,
    input  wire                         tok_pcie,
    output reg  [PTR_W-1:0]             valid_ptr,
    output reg  [PTR_W-1:0]             curr_ptr,
    output reg  [PTR_W-1:0]             ahead_ptr,
    output reg  [1:0]                   mode,
    output wire                         mux_pcie,
    output reg                          fresh,      // no context held (after reset or CLEAR)
    output reg                          following,  // curr follows ahead (the step under verification is being drafted)
    output reg                          drafting,   // tokens drafted since the last step boundary
    output reg  [1:0]                   depth,      // step-ahead steps allowed (DEPTH command)
    output reg  [1:0]                   n_marks,
    output wire [MAX_DEPTH*PTR_W-1:0]   marks,      // mark i at [i*PTR_W +: PTR_W], first at 0
    output wire [PTR_W-1:0]             mark,       // the first mark, curr when there is none
    output wire [1:0]                   steps_ahead,
    output reg                          err,
    output reg  [3:0]                   err_code
);
    localparam [2:0] CMD_NOP = 3'd0, CMD_INIT = 3'd1, CMD_SPEC = 3'd2, CMD_END_STEP = 3'd3,
                     CMD_ACCEPT = 3'd4, CMD_ROLLBACK = 3'd5, CMD_CLEAR = 3'd6, CMD_DEPTH = 3'd7;
    localparam [1:0] M_INIT = 2'd0, M_SPEC = 2'd1, M_ACCEPT = 2'd2, M_ROLLBACK = 2'd3;
    localparam [3:0] ERR_NONE = 4'd0,
                     ERR_MUX_PCIE = 4'd1,       // the input MUX selects PCIe
                     ERR_MUX_SAMPLER = 4'd2,    // the input MUX selects the local sampler
                     ERR_REVERT = 4'd3,         // re-initialisation past verified context
                     ERR_FULL = 4'd4,           // KV cache full
                     ERR_NOT_INIT = 4'd5,       // speculation before initialisation
                     ERR_DEPTH_FULL = 4'd6,     // every step-ahead step is drafted
                     ERR_NO_DRAFT = 4'd7,       // end of step with none being drafted
                     ERR_ACCEPT_NONE = 4'd8,    // accept with curr == valid
                     ERR_DRAFTING = 4'd9,       // verdict on a step still being drafted
                     ERR_ROLLBACK_NONE = 4'd10, // rollback with curr == valid
                     ERR_COLLISION = 4'd11,     // a command and a token write in one cycle
                     ERR_BAD_DEPTH = 4'd12;     // DEPTH above MAX_DEPTH
    /* verilator lint_off WIDTH */
    localparam [PTR_W-1:0] DEPTH_LIMIT = MAX_DEPTH;  // MAX_DEPTH at the pointers' width
    /* verilator lint_on WIDTH */

    reg [PTR_W-1:0] mark_q [0:MAX_DEPTH-1];

    genvar g;
    generate
        for (g = 0; g < MAX_DEPTH; g = g + 1) begin : flat
            assign marks[g*PTR_W +: PTR_W] = mark_q[g];
        end
    endgenerate

    assign mux_pcie = (mode == M_INIT) || (mode == M_ROLLBACK);
    assign mark = (n_marks != 2'd0) ? mark_q[0] : curr_ptr;
    assign steps_ahead = n_marks + {1'b0, drafting & ~following};

    // Whether one more token fits: ahead + 1 <= capacity, without overflow.
    wire room = ahead_ptr < capacity;
    // A token from the MUX's own source; a write from the other stream is refused.
    wire tok_legal = tok_pcie ? (mux_pcie & ~fresh) : ~mux_pcie;
    // A step starting now: with nothing under verification curr follows it.
    wire starts_followed = (curr_ptr == valid_ptr);

    integer i;
    always @(posedge clk) begin
        err <= 1'b0;
        err_code <= ERR_NONE;
        if (!rst_n) begin
            valid_ptr <= {PTR_W{1'b0}};
            curr_ptr <= {PTR_W{1'b0}};
            ahead_ptr <= {PTR_W{1'b0}};
            mode <= M_INIT;
            fresh <= 1'b1;
            following <= 1'b0;
            drafting <= 1'b0;
            depth <= 2'd1;
            n_marks <= 2'd0;
            for (i = 0; i < MAX_DEPTH; i = i + 1) mark_q[i] <= {PTR_W{1'b0}};
        end else if (tok_we && cmd != CMD_NOP) begin
            err <= 1'b1;
            err_code <= ERR_COLLISION;
        end else if (tok_we) begin
            if (!tok_legal) begin
                err <= 1'b1;
                err_code <= mux_pcie ? ERR_MUX_PCIE : ERR_MUX_SAMPLER;
            end else if (tok_pcie) begin
                // Shadow synchronisation: a target token extends the step under verification.
                if (!room) begin
                    err <= 1'b1;
                    err_code <= ERR_FULL;
                end else begin
                    ahead_ptr <= ahead_ptr + 1'b1;
                    curr_ptr <= curr_ptr + 1'b1;
                end
            end else if (!drafting && !starts_followed && steps_ahead >= depth) begin
                err <= 1'b1;
                err_code <= ERR_DEPTH_FULL;
            end else if (!room) begin
                err <= 1'b1;
                err_code <= ERR_FULL;
            end else begin
                // A drafted token; a new step with nothing under verification becomes
                // that step, and curr follows ahead to its boundary.
                ahead_ptr <= ahead_ptr + 1'b1;
                if (drafting ? following : starts_followed) curr_ptr <= curr_ptr + 1'b1;
                if (!drafting) following <= starts_followed;
                drafting <= 1'b1;
            end
        end else begin
            case (cmd)
                CMD_INIT: begin
                    if (!fresh && cmd_arg > valid_ptr) begin
                        err <= 1'b1;
                        err_code <= ERR_REVERT;
                    end else if (cmd_arg > capacity) begin
                        err <= 1'b1;
                        err_code <= ERR_FULL;
                    end else begin
                        valid_ptr <= cmd_arg;
                        curr_ptr <= cmd_arg;
                        ahead_ptr <= cmd_arg;
                        mode <= M_INIT;
                        fresh <= 1'b0;
                        following <= 1'b0;
                        drafting <= 1'b0;
                        n_marks <= 2'd0;
                    end
                end
                CMD_SPEC: begin
                    if (fresh) begin
                        err <= 1'b1;
                        err_code <= ERR_NOT_INIT;
                    end else begin
                        mode <= M_SPEC;
                    end
                end
                CMD_END_STEP: begin
                    if (mux_pcie) begin
                        err <= 1'b1;
                        err_code <= ERR_MUX_PCIE;
                    end else if (!drafting) begin
                        err <= 1'b1;
                        err_code <= ERR_NO_DRAFT;
                    end else begin
                        // A step-ahead step's boundary is kept; the followed step's is curr.
                        if (!following) begin
                            for (i = 0; i < MAX_DEPTH; i = i + 1)
                                if (i == {30'd0, n_marks}) mark_q[i] <= ahead_ptr;
                            n_marks <= n_marks + 1'b1;
                        end
                        following <= 1'b0;
                        drafting <= 1'b0;
                    end
                end
                CMD_ACCEPT: begin
                    if (curr_ptr == valid_ptr) begin
                        err <= 1'b1;
                        err_code <= ERR_ACCEPT_NONE;
                    end else if (following) begin
                        err <= 1'b1;
                        err_code <= ERR_DRAFTING;
                    end else begin
`ifndef KVMU_FAULT_ACCEPT_KEEPS_VALID
                        valid_ptr <= curr_ptr;
`endif
                        if (n_marks != 2'd0) begin
                            // The first finished step-ahead step is now under verification.
                            curr_ptr <= mark_q[0];
                            for (i = 0; i + 1 < MAX_DEPTH; i = i + 1) mark_q[i] <= mark_q[i + 1];
                            n_marks <= n_marks - 1'b1;
                        end else begin
                            // A step-ahead step still being drafted becomes the one under verification.
                            curr_ptr <= ahead_ptr;
                            following <= drafting;
                        end
                        mode <= M_ACCEPT;
                    end
                end
                CMD_ROLLBACK: begin
                    if (mux_pcie) begin
                        err <= 1'b1;
                        err_code <= ERR_MUX_PCIE;
                    end else if (curr_ptr == valid_ptr) begin
                        err <= 1'b1;
                        err_code <= ERR_ROLLBACK_NONE;
                    end else if (following) begin
                        err <= 1'b1;
                        err_code <= ERR_DRAFTING;
                    end else begin
                        curr_ptr <= valid_ptr;
                        ahead_ptr <= valid_ptr;
                        following <= 1'b0;
                        drafting <= 1'b0;
                        n_marks <= 2'd0;
                        mode <= M_ROLLBACK;
                    end
                end
                CMD_CLEAR: begin
                    valid_ptr <= {PTR_W{1'b0}};
                    curr_ptr <= {PTR_W{1'b0}};
                    ahead_ptr <= {PTR_W{1'b0}};
                    mode <= M_INIT;
                    fresh <= 1'b1;
                    following <= 1'b0;
                    drafting <= 1'b0;
                    n_marks <= 2'd0;
                end
                CMD_DEPTH: begin
                    if (cmd_arg > DEPTH_LIMIT) begin
                        err <= 1'b1;
                        err_code <= ERR_BAD_DEPTH;
                    end else begin
                        depth <= cmd_arg[1:0];
                    end
                end
                default: ;
            endcase
        end
    end
endmodule

`default_nettype wire
