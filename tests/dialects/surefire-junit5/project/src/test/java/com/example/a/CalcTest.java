package com.example.a;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Same simple name, display names and method names as com.example.b.CalcTest, other outcomes. */
@DisplayName("Calculator")
class CalcTest {
    @Test
    @DisplayName("adds")
    void add() {
        assertEquals(3, 1 + 2);
    }

    @Test
    @DisplayName("divides")
    void divide() {
        assertEquals(4, 7 / 2); // fails here, passes in com.example.b
    }
}
