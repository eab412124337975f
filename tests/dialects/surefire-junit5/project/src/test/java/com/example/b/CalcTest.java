package com.example.b;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** See com.example.a.CalcTest. */
@DisplayName("Calculator")
class CalcTest {
    @Test
    @DisplayName("adds")
    void add() {
        assertEquals(4, 1 + 2); // fails here, passes in com.example.a
    }

    @Test
    @DisplayName("divides")
    void divide() {
        assertEquals(3, 7 / 2);
    }
}
