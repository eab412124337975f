package com.example.edge;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

@Disabled("whole class disabled")
class DisabledClassTest {
    @Test
    void one() {}

    @Test
    void two() {}
}
